"""The report's table sections: scores, indicators, reliability, behaviour tasks, panels,
samples and provenance, as plain rows for the template."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psymetrics_core.analysis.report import analyze
from psymetrics_core.base.errors import PsymError
from psymetrics_core.instruments.indicators import THRESHOLDS, warnings_of
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.read import PANEL_FILES, RunData
from psymetrics_core.report.values import cell, fmt, is_questionnaire, num, scale_order, task_order

__all__ = [
    "MAX_SAMPLES",
    "eval_table",
    "indicator_rows",
    "analysis_tables",
    "behaviour_rows",
    "panel_blocks",
    "sample_rows",
    "provenance_rows",
]

MAX_SAMPLES = 4000  # rows in the sample drill-down (the rest are counted, not shown)


def eval_table(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """Per task: one row per scale with each run's first-administration score, count and z."""
    out = []
    for task in task_order(runs):
        rows = []
        for scale in scale_order(runs, task):
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
                        "value": num(s.get("score")),
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
            rate = num(e.get("parse_rate"))
            parse.append(
                {
                    "text": "—" if rate is None else f"{100 * rate:.0f}%",
                    "detail": "counts not recorded"
                    if e.get("n_items") is None
                    else f"{e.get('n_answered')}/{e.get('n_items')} parsed, "
                    f"{e.get('n_unparsed', '—')} unparsed, {e.get('n_refused', '—')} refused",
                }
            )
        out.append({"task": task, "rows": rows, "parse": parse})
    return out


def indicator_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """Validity indicators of every (run, task) that has them, with warning lines."""

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


def analysis_tables(runs: Sequence[RunData], session: Session) -> dict[str, Any]:
    """Reliability (α, ω, ICC) and response styles from ``psym analyze``'s functions."""

    rel, styles, notes = [], [], []
    q_runs = [r for r in runs if any(is_questionnaire(e) for e in r.tasks.values())]
    for r in q_runs:
        try:
            rep = analyze([r.path], session=session)
        except (PsymError, KeyError, TypeError, ValueError) as exc:
            notes.append(f"{r.label}: reliability not computed ({exc})")
            continue
        for tasks in rep["analyses"].values():
            for task, a in tasks.items():
                if not is_questionnaire(r.tasks.get(task) or {}):
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
                            "ci": f"[{fmt(ci[0])}, {fmt(ci[1])}]" if num(ci[0]) else "",
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
    if num(v.get("ICC2")) is None:
        return f"{cond}: — ({v.get('note', 'not computable')})"
    return f"{cond}: {fmt(v['ICC2'])} ({v.get('n_targets')} items × {v.get('k')} repeats)"


def behaviour_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """Scores of behaviour (free-text, judged, probe) tasks, rendered generically."""
    out = []
    for r in runs:
        for task, e in r.tasks.items():
            if is_questionnaire(e):
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
                        "ci": f"[{fmt(low, 3)}, {fmt(high, 3)}]" if num(low) is not None else "",
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
        rows = [[cell(x.get(c)) for c in cols] for x in data]
        return [{"title": title, "columns": cols, "rows": rows}]
    if isinstance(data, dict):
        scalars = [[k, cell(v)] for k, v in data.items() if not isinstance(v, dict | list)]
        out = [{"title": title, "columns": ["field", "value"], "rows": scalars}] if scalars else []
        for k, v in data.items():
            if isinstance(v, dict | list):
                out += _tables(v, f"{title}.{k}" if title else str(k))
        return out
    return [{"title": title, "columns": ["value"], "rows": [[cell(data)]]}]


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
        rows = [{"key": k, "value": cell(v)} for k, v in fields]
        backend = [
            {"key": k, "value": cell(v)} for k, v in sorted((res.get("backend") or {}).items())
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
