"""The report's sections as plain data for the template (figures already rendered to SVG)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from . import figures as F
from .data import PANEL_FILES, RunData

__all__ = ["build_context", "MAX_SAMPLES"]

MAX_SAMPLES = 4000  # rows in the sample drill-down (the rest are counted, not shown)
MAX_HEATMAP_ITEMS = 150
RESPONDENTS = (
    "Respondents here are administrations of one model (condition cells × seeded repeats), not "
    "people: α and ω say how the items of a scale co-vary across those administrations, and the "
    "ICC how stable item answers are across repeats. With fewer than 3 administrations they are "
    "undefined (shown as —, with the reason)."
)


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return None if math.isnan(float(x)) else float(x)


def fmt(x: Any, digits: int = 2) -> str:
    """A number for the page, or an em dash."""
    v = _num(x)
    return "—" if v is None else f"{v:.{digits}f}"


def _is_questionnaire(entry: dict[str, Any]) -> bool:
    return entry.get("kind", "questionnaire") == "questionnaire"


def _task_order(runs: Sequence[RunData]) -> list[str]:
    return list(dict.fromkeys(t for r in runs for t in r.tasks))


def _scale_order(runs: Sequence[RunData], task: str) -> list[str]:
    return list(dict.fromkeys(s for r in runs for s in (r.tasks.get(task) or {}).get("scales", {})))


def eval_table(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """Per task: one row per scale with each run's first-administration score, count and z."""
    out = []
    for task in _task_order(runs):
        rows = []
        for scale in _scale_order(runs, task):
            cells: list[dict[str, Any] | None] = []
            for r in runs:
                s = ((r.tasks.get(task) or {}).get("scales") or {}).get(scale)
                if s is None:
                    cells.append(None)
                    continue
                n_i, n_a = s.get("n_items"), s.get("n_answered")
                cells.append(
                    {
                        "run": r.label,
                        "value": _num(s.get("score")),
                        "text": fmt(s.get("score")),
                        "reason": s.get("reason"),
                        "answered": f"{n_a}/{n_i}" if n_i is not None else "",
                        "incomplete": n_i is not None and n_a is not None and n_a < n_i,
                        "z": fmt(s.get("z")) if s.get("z") is not None else "",
                        "group": (s.get("norm") or {}).get("group", ""),
                    }
                )
            rows.append({"scale": scale, "cells": cells})
        parse: list[dict[str, Any] | None] = []
        for r in runs:
            e = r.tasks.get(task)
            if e is None:
                parse.append(None)
                continue
            rate = _num(e.get("parse_rate"))
            parse.append(
                {
                    "text": "—" if rate is None else f"{100 * rate:.0f}%",
                    "detail": f"{e.get('n_answered')}/{e.get('n_items')} parsed, "
                    f"{e.get('n_unparsed', 0)} unparsed, {e.get('n_refused', 0)} refused",
                }
            )
        out.append({"task": task, "rows": rows, "parse": parse})
    return out


def indicator_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """Validity indicators of every (run, task) that has them, with warning lines."""
    from ..indicators import THRESHOLDS, warnings_of

    out = []
    present = [
        n for n in THRESHOLDS if any(n in (e.get("indicators") or {}) for r in runs
                                     for e in r.tasks.values())
    ]  # fmt: skip
    for r in runs:
        for task, e in r.tasks.items():
            ind = e.get("indicators")
            if not ind:
                continue
            cells = []
            for name in present:
                i = ind.get(name)
                if i is None:
                    cells.append({"name": name.replace("_", "-"), "text": "", "fired": False,
                                  "title": "not measured"})  # fmt: skip
                    continue
                cells.append(
                    {
                        "name": name.replace("_", "-"),
                        "text": fmt(i.get("value")),
                        "fired": bool(i.get("fired")),
                        "title": i.get("reason") or f"threshold {i.get('threshold')}",
                    }
                )
            out.append({"run": r.label, "task": task, "cells": cells, "warnings": warnings_of(ind)})
    return out


def _administrations(entry: dict[str, Any]) -> list[dict[str, Any]]:
    return list(entry.get("runs") or [entry])


def _interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95% t-interval (a point when there is one value)."""
    n = len(values)
    m = sum(values) / n
    if n < 2:
        return m, m, m
    from scipy import stats

    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    h = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return m, m - h, m + h


def _range_of(r: RunData, task: str) -> tuple[float, float] | None:
    for s in r.samples:
        meta = s.get("item_meta") or {}
        if s.get("task") == task and meta.get("min") is not None and meta.get("max") is not None:
            return float(meta["min"]), float(meta["max"])
    return None


def profile_figures(runs: Sequence[RunData]) -> list[F.Figure]:
    """Scale profile against human norms, per questionnaire task."""
    out = []
    for task in _task_order(runs):
        scales = [s for s in _scale_order(runs, task)]
        points: dict[tuple[str, str], tuple[float, float, float] | None] = {}
        norms: dict[str, tuple[float, float, str]] = {}
        counts = []
        lo = hi = None
        for r in runs:
            e = r.tasks.get(task)
            if e is None or not _is_questionnaire(e):
                continue
            rng = _range_of(r, task)
            adm = _administrations(e)
            counts.append(f"{r.label}: {len(adm)}")
            for scale in scales:
                vals = [
                    float(v)
                    for a in adm
                    if (v := _num(((a.get("scales") or {}).get(scale) or {}).get("score")))
                    is not None
                ]
                points[(r.label, scale)] = _interval(vals) if vals else None
                norm = ((e.get("scales") or {}).get(scale) or {}).get("norm")
                if norm and scale not in norms:
                    norms[scale] = (float(norm["mean"]), float(norm["sd"]), str(norm["group"]))
            if rng:
                lo = rng[0] if lo is None else min(lo, rng[0])
                hi = rng[1] if hi is None else max(hi, rng[1])
        if not any(points.values()):
            continue
        methods = {
            ((r.tasks.get(task) or {}).get("scales") or {}).get(s, {}).get("method")
            for r in runs
            for s in scales
        }
        vals = [v for p in points.values() if p for v in p] + [
            x for m, sd, _ in norms.values() for x in (m - sd, m + sd)
        ]
        if "sum" in methods or lo is None or hi is None:
            lo, hi = min(vals), max(vals)
        else:
            lo, hi = min(lo, *vals), max(hi, *vals)
        if hi <= lo:
            hi = lo + 1
        labels = [r.label for r in runs if task in r.tasks]
        fig = F.profile_figure(scales, labels, points, norms, lo, hi)
        alt = f"{task} scale profile: " + "; ".join(
            f"{lbl} {s} {fmt(p[0])}"
            for lbl in labels
            for s in scales
            if (p := points.get((lbl, s))) is not None
        )
        group = sorted({g for _, _, g in norms.values()})
        caption = (
            f"{task}: each model's mean scale score with its 95% t-interval over administrations "
            f"({', '.join(counts)}; one administration = a point without interval). "
            + (
                f"Grey band: human norm mean ± 1 SD ({', '.join(group)}); top axis: z against it."
                if norms
                else "This instrument has no human norms."
            )
        )
        out.append(F.Figure(F.svg_of(fig, alt), caption, alt))
    return out


def distribution_figures(runs: Sequence[RunData]) -> list[F.Figure]:
    """Item x answer-code heatmaps per run and questionnaire task (option probabilities in
    logprob mode)."""
    out = []
    for r in runs:
        by_task: dict[str, list[dict[str, Any]]] = {}
        for s in r.samples:
            meta = s.get("item_meta") or {}
            if meta.get("min") is None or meta.get("max") is None:
                continue
            by_task.setdefault(str(s.get("task")), []).append(s)
        for task, rows in by_task.items():
            items = list(dict.fromkeys(str(s["item"]) for s in rows))
            if len(items) > MAX_HEATMAP_ITEMS:
                continue
            lo = int(min(s["item_meta"]["min"] for s in rows))
            hi = int(max(s["item_meta"]["max"] for s in rows))
            codes = list(range(lo, hi + 1))
            reverse = {str(s["item"]): bool(s["item_meta"].get("reverse")) for s in rows}
            logprob = r.mode == "logprob" and any(s.get("option_probs") for s in rows)
            shares = []
            for it in items:
                mine = [s for s in rows if str(s["item"]) == it]
                acc = [0.0] * len(codes)
                n = 0
                for s in mine:
                    if logprob and s.get("option_probs"):
                        for k, p in s["option_probs"].items():
                            if lo <= int(k) <= hi:
                                acc[int(k) - lo] += float(p)
                        n += 1
                    elif s.get("answer") is not None and lo <= int(s["answer"]) <= hi:
                        acc[int(s["answer"]) - lo] += 1
                        n += 1
                shares.append([a / n if n else 0.0 for a in acc])
            what = "mean option probability" if logprob else "share of administrations"
            title = f"{r.label} · {task}"
            fig = F.distribution_figure(
                items, [reverse[i] for i in items], codes, shares, title, what
            )
            n_rev = sum(reverse[i] for i in items)
            alt = (
                f"Heatmap of {len(items)} {task} items by answer code {lo}–{hi} for {r.label}; "
                f"{n_rev} reverse-keyed items marked (R)."
            )
            caption = (
                f"{r.label}, {task}: {what} per answer code and item, over "
                f"{len({(s.get('condition'), s.get('repeat')) for s in rows})} administration(s). "
                "Reverse-keyed items are marked (R) in red: a column of dark cells that crosses "
                "them unchanged is straight-lining, not a trait."
            )
            out.append(F.Figure(F.svg_of(fig, alt), caption, alt))
    return out


def forest_figures(runs: Sequence[RunData]) -> list[F.Figure]:
    """Condition minus reference differences in scale scores, with Welch 95% intervals."""
    out = []
    for r in runs:
        for task, e in r.tasks.items():
            adm = _administrations(e)
            conds = list(dict.fromkeys(str(a.get("condition", "original")) for a in adm))
            if len(conds) < 2:
                continue
            ref = "original" if "original" in conds else conds[0]
            rows: list[tuple[str, float, float | None, float | None]] = []
            for c in conds:
                if c == ref:
                    continue
                for scale in e.get("scales") or {}:
                    a = _scores(adm, c, scale)
                    b = _scores(adm, ref, scale)
                    if not a or not b:
                        continue
                    d, low, high = _welch(a, b)
                    rows.append((f"{scale}: {c}", d, low, high))
            if not rows:
                continue
            fig = F.forest_figure(rows, f"score difference vs '{ref}'")
            alt = f"Forest plot of {len(rows)} {task} score differences against {ref} for {r.label}"
            caption = (
                f"{r.label}, {task}: mean scale score under each condition minus under '{ref}', "
                "with Welch 95% intervals over seeded repeats. Open red diamonds: one "
                "administration per cell, so no interval (use --repeats)."
            )
            out.append(F.Figure(F.svg_of(fig, alt), caption, alt))
    return out


def _scores(adm: Sequence[dict[str, Any]], cond: str, scale: str) -> list[float]:
    return [
        float(v)
        for a in adm
        if str(a.get("condition", "original")) == cond
        and (v := _num(((a.get("scales") or {}).get(scale) or {}).get("score"))) is not None
    ]


def _welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float | None, float | None]:
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    d = ma - mb
    if len(a) < 2 or len(b) < 2:
        return d, None, None
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1) / len(a)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return d, d, d
    from scipy import stats

    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    h = float(stats.t.ppf(0.975, df)) * se
    return d, d - h, d + h


def analysis_tables(runs: Sequence[RunData]) -> dict[str, Any]:
    """Reliability (α, ω, ICC) and response styles from ``psym analyze``'s functions."""
    from ..analysis.report import analyze
    from ..errors import PsymError

    rel, styles, notes = [], [], []
    q_runs = [r for r in runs if any(_is_questionnaire(e) for e in r.tasks.values())]
    for r in q_runs:
        try:
            rep = analyze([r.path])
        except (PsymError, KeyError, TypeError, ValueError) as exc:
            notes.append(f"{r.label}: reliability not computed ({exc})")
            continue
        for tasks in rep["analyses"].values():
            for task, a in tasks.items():
                if not _is_questionnaire(r.tasks.get(task) or {}):
                    continue
                icc = a.get("icc") or {}
                for scale, x in (a.get("reliability") or {}).items():
                    ci = x.get("ci95") or [None, None]
                    icc_txt = "; ".join(_icc_text(c, v or {}) for c, v in sorted(icc.items()))
                    rel.append(
                        {
                            "run": r.label,
                            "task": task,
                            "scale": scale,
                            "alpha": fmt(x.get("alpha")),
                            "ci": f"[{fmt(ci[0])}, {fmt(ci[1])}]" if _num(ci[0]) else "",
                            "omega": fmt((x.get("omega") or {}).get("omega")),
                            "n": x.get("n"),
                            "k": x.get("k"),
                            "icc": icc_txt or "— (needs 2+ repeats)",
                            "note": x.get("note") or (x.get("omega") or {}).get("note", ""),
                        }
                    )
                for cond, m in (a.get("response_styles") or {}).get("mean", {}).items():
                    styles.append(
                        {
                            "run": r.label,
                            "task": task,
                            "condition": cond,
                            **{k: fmt(v) for k, v in m.items()},
                        }
                    )
    return {"reliability": rel, "styles": styles, "notes": notes}


def _icc_text(cond: str, v: dict[str, Any]) -> str:
    """ICC(A,1) (Shrout-Fleiss ICC2, absolute agreement of item answers across repeats)."""
    if _num(v.get("ICC2")) is None:
        return f"{cond}: — ({v.get('note', 'not computable')})"
    return f"{cond}: {fmt(v['ICC2'])} ({v.get('n_targets')} items × {v.get('k')} repeats)"


def behaviour_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """Scores of behaviour (free-text, judged, probe) tasks, rendered generically."""
    out = []
    for r in runs:
        for task, e in r.tasks.items():
            if _is_questionnaire(e):
                continue
            scores = e.get("scores") or e.get("scales") or {}
            rows = []
            for name, s in scores.items():
                s = s if isinstance(s, dict) else {"value": s}
                value = s.get("value", s.get("score"))
                low, high = s.get("ci_low"), s.get("ci_high")
                rows.append(
                    {
                        "name": name,
                        "value": fmt(value, 3),
                        "ci": f"[{fmt(low, 3)}, {fmt(high, 3)}]" if _num(low) is not None else "",
                        "n": s.get("n", s.get("n_answered", "")),
                        "reason": s.get("reason") or s.get("note") or "",
                    }
                )
            judge = r.results.get("judge") or {}
            out.append(
                {
                    "run": r.label,
                    "task": task,
                    "kind": e.get("kind"),
                    "rows": rows,
                    "judge": judge.get("model") if judge else None,
                    "parse": fmt(e.get("parse_rate")),
                    "citation": (e.get("instrument") or {}).get("citation", ""),
                }
            )
    return out


def panel_blocks(runs: Sequence[RunData]) -> dict[str, list[dict[str, Any]]]:
    """Panels written by other commands, rendered generically from their JSON."""
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in PANEL_FILES}
    for r in runs:
        for name, data in r.panels.items():
            out[name].append({"run": r.label, "tables": _tables(data)})
    return out


def _tables(data: Any, title: str = "") -> list[dict[str, Any]]:
    """JSON as tables: a mapping of scalars -> key/value; a list of mappings -> rows."""
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        cols = list(dict.fromkeys(k for x in data for k in x))
        rows = [[_cell(x.get(c)) for c in cols] for x in data]
        return [{"title": title, "columns": cols, "rows": rows}]
    if isinstance(data, dict):
        scalars = [[k, _cell(v)] for k, v in data.items() if not isinstance(v, dict | list)]
        out = [{"title": title, "columns": ["field", "value"], "rows": scalars}] if scalars else []
        for k, v in data.items():
            if isinstance(v, dict | list):
                out += _tables(v, f"{title}.{k}" if title else str(k))
        return out
    return [{"title": title, "columns": ["value"], "rows": [[_cell(data)]]}]


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return fmt(v, 3)
    if isinstance(v, dict | list):
        return json.dumps(v, sort_keys=True, ensure_ascii=False)
    return "—" if v is None else str(v)


def sample_rows(runs: Sequence[RunData]) -> tuple[list[dict[str, Any]], int]:
    """Rows of the drill-down (prompt, completion, parsed answer) and how many were left out."""
    rows: list[dict[str, Any]] = []
    total = 0
    for r in runs:
        for s in r.samples:
            total += 1
            if len(rows) >= MAX_SAMPLES:
                continue
            rows.append(
                {
                    "run": r.label,
                    "task": s.get("task"),
                    "item": s.get("item"),
                    "condition": s.get("condition", "original"),
                    "repeat": s.get("repeat", 0),
                    "prompt": s.get("rendered_prompt") or "",
                    "completion": s.get("completion") or "",
                    "answer": "—" if s.get("answer") is None else s.get("answer"),
                    "status": s.get("parse_status", ""),
                }
            )
    return rows, total - len(rows)


def provenance_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """What produced each run: command, commit, versions, model identity, file hashes."""
    out = []
    for r in runs:
        res = r.results
        fields = [
            ("label", r.label),
            ("run directory", r.path.name),
            ("model", res.get("model")),
            ("mode", r.mode),
            ("seed(s)", ", ".join(str(s) for s in res.get("seeds") or [res.get("seed")])),
            ("conditions", ", ".join(res.get("conditions") or ["original"])),
            ("repeats", res.get("repeats", 1)),
            ("limit", res.get("limit")),
            ("psymetrics", res.get("psymetrics")),
            ("python", res.get("python")),
            ("platform", res.get("platform")),
            ("created", res.get("created")),
        ]
        prov = res.get("provenance") or {}
        if prov.get("command"):
            fields.append(("command line", " ".join(prov["command"])))
        if prov.get("git_commit"):
            fields.append(("git commit", prov["git_commit"]))
        rows = [{"key": k, "value": _cell(v)} for k, v in fields]
        backend = [
            {"key": k, "value": _cell(v)} for k, v in sorted((res.get("backend") or {}).items())
        ]
        plugins = [
            {"key": k, "value": f"{(v or {}).get('distribution')} {(v or {}).get('version')}"}
            for k, v in sorted((res.get("plugins") or {}).items())
        ]
        files = [
            {"key": f.get("path", ""), "value": f"{f.get('role', '')} sha256 {f.get('sha256', '')}"}
            for f in prov.get("files") or []
        ]
        cites = [
            {"key": t, "value": (e.get("instrument") or {}).get("citation", "")}
            for t, e in r.tasks.items()
        ]
        out.append(
            {"run": r.label, "fields": rows, "backend": backend, "plugins": plugins,
             "files": files, "citations": cites}
        )  # fmt: skip
    return out


def build_context(runs: Sequence[RunData]) -> dict[str, Any]:
    """Everything the template renders."""
    samples, left_out = sample_rows(runs)
    return {
        "runs": [
            {
                "label": r.label,
                "model": r.results.get("model"),
                "mode": r.mode,
                "tasks": ", ".join(r.tasks),
                "path": r.path.name,
            }
            for r in runs
        ],  # fmt: skip
        "labels": [r.label for r in runs],
        "eval_table": eval_table(runs),
        "indicators": indicator_rows(runs),
        "profile": profile_figures(runs),
        "analysis": analysis_tables(runs),
        "respondents": RESPONDENTS,
        "distributions": distribution_figures(runs),
        "forest": forest_figures(runs),
        "behaviour": behaviour_rows(runs),
        "panels": panel_blocks(runs),
        "panel_titles": PANEL_FILES,
        "samples": samples,
        "samples_left_out": left_out,
        "provenance": provenance_rows(runs),
    }
