"""The report's figure sections: scale profiles against norms, answer distributions and
condition forest plots (data from the runs; drawing in ``figures.py``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from psymetrics_core.records.population_summary import fired, is_population_run
from psymetrics_core.records.read import RunData
from psymetrics_core.report import figures as F
from psymetrics_core.report.values import (
    administrations,
    fmt,
    is_questionnaire,
    num,
    scale_order,
    task_order,
)

__all__ = [
    "profile_figures",
    "distribution_figures",
    "forest_figures",
    "flagged_scores",
    "MAX_HEATMAP_ITEMS",
]

MAX_HEATMAP_ITEMS = 150


def _interval(values: Sequence[float]) -> tuple[float, float | None, float | None]:
    """Mean and 95% t-interval (no interval, None, when there is one value)."""
    n = len(values)
    m = sum(values) / n
    if n < 2:
        return m, None, None
    from scipy import stats  # on demand: the [analysis] extra

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
    for task in task_order(runs):
        scales = [s for s in scale_order(runs, task)]
        points: dict[tuple[str, str], tuple[float, float | None, float | None] | None] = {}
        norms: dict[str, tuple[float, float, str]] = {}
        counts = []
        lo = hi = None
        for r in runs:
            e = r.tasks.get(task)
            if e is None or not is_questionnaire(e):
                continue
            rng = _range_of(r, task)
            adm = administrations(e)
            counts.append(f"{r.label}: {len(adm)}")
            for scale in scales:
                vals = [
                    float(v)
                    for a in adm
                    if (v := num(((a.get("scales") or {}).get(scale) or {}).get("score")))
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
        vals = [v for p in points.values() if p for v in p if v is not None] + [
            x for m, sd, _ in norms.values() for x in (m - sd, m + sd)
        ]
        if "sum" in methods or lo is None or hi is None:
            lo, hi = min(vals), max(vals)
        else:
            lo, hi = min(lo, *vals), max(hi, *vals)
        if hi <= lo:
            hi = lo + 1
        labels = [r.label for r in runs if task in r.tasks]
        flagged = frozenset(r.label for r in runs if task in r.tasks and _degenerate(r, task))
        fig = F.profile_figure(scales, labels, points, norms, lo, hi, flagged)
        alt = f"{task} scale profile: " + "; ".join(
            f"{lbl} {s} {fmt(p[0])}"
            for lbl in labels
            for s in scales
            if (p := points.get((lbl, s))) is not None
        )
        group = sorted({g for _, _, g in norms.values()})
        caption = (
            f"{task}: each model's mean scale score with its 95% t-interval over administrations "
            f"({', '.join(counts)}; one administration = a point without interval; a population "
            "run's administrations are its respondents). "
            + (
                f"Grey band: human norm mean ± 1 SD ({', '.join(group)}); top axis: z against it."
                if norms
                else "This instrument has no human norms: no band is drawn."
            )
            + (
                f" Grey hatched squares: {', '.join(sorted(flagged))}, whose answer pattern is "
                "degenerate (a validity indicator beyond its threshold; for a population, every "
                "respondent's): these scores describe that pattern, not a personality."
                if flagged
                else ""
            )
        )
        out.append(F.Figure(F.svg_of(fig, alt), caption, alt))
    return out


def _degenerate(r: RunData, task: str) -> bool:
    """Whether ``r``'s answer pattern on ``task`` is degenerate: a single-model run's
    indicators fired, or every respondent cell of a population run's was flagged."""
    e = r.tasks.get(task) or {}
    if not is_population_run(r.results):
        return fired(e.get("indicators"))
    cells = administrations(e)
    return bool(cells) and all(fired(c.get("indicators")) for c in cells)


def flagged_scores(runs: Sequence[RunData]) -> dict[str, dict[str, list[float]]]:
    """Per task and scale, the scores of the population runs' respondent cells whose answer
    pattern a validity indicator flagged (drawn apart in the population histograms)."""
    out: dict[str, dict[str, list[float]]] = {}
    for r in runs:
        if not is_population_run(r.results):
            continue
        for task, e in r.tasks.items():
            for cell in administrations(e):
                if not fired(cell.get("indicators")):
                    continue
                for scale, s in (cell.get("scales") or {}).items():
                    v = num((s or {}).get("score"))
                    if v is not None:
                        out.setdefault(task, {}).setdefault(scale, []).append(v)
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
                # an item with no usable answer has no shares (a blank cell), not zeros
                shares.append([a / n if n else math.nan for a in acc])
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
                "them unchanged is straight-lining, not a trait. A blank row: no usable answer."
            )
            out.append(F.Figure(F.svg_of(fig, alt), caption, alt))
    return out


def forest_figures(runs: Sequence[RunData]) -> list[F.Figure]:
    """Condition minus reference differences in scale scores, with Welch 95% intervals."""
    out = []
    for r in runs:
        for task, e in r.tasks.items():
            adm = administrations(e)
            conds = list(dict.fromkeys(str(a.get("condition", "original")) for a in adm))
            if len(conds) < 2 or is_population_run(r.results):
                continue  # one cell per respondent: the population section compares people
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
                "with Welch 95% intervals over seeded repeats. Open red diamonds: no interval "
                "(one administration per cell, or no spread between repeats; use --repeats)."
            )
            out.append(F.Figure(F.svg_of(fig, alt), caption, alt))
    return out


def _scores(adm: Sequence[dict[str, Any]], cond: str, scale: str) -> list[float]:
    return [
        float(v)
        for a in adm
        if str(a.get("condition", "original")) == cond
        and (v := num(((a.get("scales") or {}).get(scale) or {}).get("score"))) is not None
    ]


def _welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float | None, float | None]:
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    d = ma - mb
    if len(a) < 2 or len(b) < 2:
        return d, None, None
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1) / len(a)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:  # no spread between repeats: the interval is undefined, not zero-width
        return d, None, None
    from scipy import stats  # on demand: the [analysis] extra

    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    h = float(stats.t.ppf(0.975, df)) * se
    return d, d - h, d + h
