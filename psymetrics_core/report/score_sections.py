"""The report's first tables: scale scores and validity indicators, with the terminal's trust
cues (each scale's score range, ``!`` beside scores of a degenerate answer pattern, the
degenerate-profile sentence).

A single-model run shows its task entry (the first administration, as ``psym eval`` prints it).
A population run shows its population entry (``records.population_summary``: each scale's mean,
SD, n respondents, min and max; each indicator's distribution across respondents), exactly
what ``psym eval`` printed, never one respondent's values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psymetrics_core.administer.ranges import range_text, scale_ranges
from psymetrics_core.instruments.indicators import (
    SHORT_NAMES,
    THRESHOLDS,
    degenerate_sentence,
    n_scored,
    warnings_of,
)
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.population_summary import (
    TaskSpread,
    degenerate_line,
    fired,
    is_population_run,
    population_summary,
)
from psymetrics_core.records.read import RunData
from psymetrics_core.report.values import administrations, fmt, num, scale_order, task_order

__all__ = ["eval_table", "score_columns", "indicator_rows", "score_notes"]

SINGLE = "score · answered · z (norm)"
POPULATION = "population: mean ± SD · n respondents · min–max"


def _spreads(r: RunData) -> dict[str, list[TaskSpread]]:
    """A population run's population entry per task (empty for a single-model run)."""
    out: dict[str, list[TaskSpread]] = {}
    if is_population_run(r.results):
        for s in population_summary(r.results):
            out.setdefault(s.task, []).append(s)
    return out


def score_columns(runs: Sequence[RunData]) -> list[dict[str, str]]:
    """One column per run: its label and what its cells show."""
    return [
        {"label": r.label, "what": POPULATION if is_population_run(r.results) else SINGLE}
        for r in runs
    ]


def _ranges(runs: Sequence[RunData], session: Session | None) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    if session is None:
        return out
    for r in runs:
        for key, span in scale_ranges(r.results, session).items():
            out.setdefault(key, range_text(span))
    return out


def _single_cell(r: RunData, task: str, scale: str) -> dict[str, Any] | None:
    e = r.tasks.get(task) or {}
    s = (e.get("scales") or {}).get(scale)
    if s is None:
        return None
    n_i, n_a = s.get("n_items"), s.get("n_answered")
    return {
        "run": r.label,
        "value": num(s.get("score")),
        "text": fmt(s.get("score")),
        "reason": s.get("reason"),
        "answered": f"{n_a}/{n_i}" if n_i is not None else "",
        "incomplete": n_i is not None and n_a is not None and n_a < n_i,
        "z": fmt(s.get("z")) if s.get("z") is not None else "",
        "group": (s.get("norm") or {}).get("group", ""),
        "mark": fired(e.get("indicators")) and s.get("score") is not None,
        "groups": [],
    }


def _population_cell(r: RunData, spreads: list[TaskSpread], scale: str) -> dict[str, Any] | None:
    groups = []
    for sp in spreads:
        s = next((x for x in sp.scales if x.scale == scale), None)
        if s is None:
            continue
        groups.append(
            {
                "group": sp.group or ("original" if len(spreads) > 1 else ""),
                "value": s.mean,
                "text": fmt(s.mean),
                "sd": fmt(s.sd),
                "n": s.n,
                "minmax": f"{fmt(s.min)}–{fmt(s.max)}",
                "reason": s.reason,
                "mark": sp.n_degenerate == sp.n_cells and s.mean is not None,
            }
        )
    return {"run": r.label, "groups": groups} if groups else None


def _parse(r: RunData, task: str) -> dict[str, Any] | None:
    """The task's parse rate: its entry's, or over every respondent cell of a population."""
    e = r.tasks.get(task)
    if e is None:
        return None
    cells = administrations(e) if is_population_run(r.results) else [e]
    keys = ("n_items", "n_answered", "n_unparsed", "n_refused")
    counts = {k: [num(c.get(k)) for c in cells] for k in keys}
    total = {k: None if None in v else int(sum(x or 0 for x in v)) for k, v in counts.items()}
    n_i, n_a = total["n_items"], total["n_answered"]
    if n_i is None or n_a is None:
        rate = num(e.get("parse_rate"))
        text = "—" if rate is None else f"{100 * rate:.0f}%"
        return {"text": text, "detail": "counts not recorded"}
    rate = n_a / n_i if n_i else None
    other = {k: "—" if v is None else str(v) for k, v in total.items()}
    over = f" over {len(cells)} respondent cells" if len(cells) > 1 else ""
    return {
        "text": "—" if rate is None else f"{100 * rate:.0f}%",
        "detail": f"{n_a}/{n_i} parsed{over}, {other['n_unparsed']} unparsed, "
        f"{other['n_refused']} refused",
    }


def eval_table(runs: Sequence[RunData], session: Session | None = None) -> list[dict[str, Any]]:
    """Per task: one row per scale (with its score range where ``session`` has the
    instrument) and one cell per run, and the parse row."""
    ranges = _ranges(runs, session)
    spreads = [_spreads(r) for r in runs]
    out = []
    for task in task_order(runs):
        rows = []
        for scale in scale_order(runs, task):
            cells = [
                _population_cell(r, sp[task], scale) if task in sp else _single_cell(r, task, scale)
                for r, sp in zip(runs, spreads, strict=True)
            ]
            rows.append({"scale": scale, "range": ranges.get((task, scale), ""), "cells": cells})
        out.append({"task": task, "rows": rows, "parse": [_parse(r, task) for r in runs]})
    return out


def score_notes(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """The lines under the score table: the degenerate-profile sentence of each single-model
    task whose indicators fired, and each population task's count of flagged respondents."""
    out = []
    for r in runs:
        who = f"{r.label} · " if len(runs) > 1 else ""
        sp = _spreads(r)
        for task, e in r.tasks.items():
            if task in sp:
                for s in sp[task]:
                    text = degenerate_line(s)
                    if s.n_degenerate == s.n_cells:
                        text += ". " + degenerate_sentence(task, "the validity table below")
                    out.append({"text": who + text, "mark": s.n_degenerate > 0})
            elif fired(e.get("indicators")):
                where = "the validity indicators below"
                n_ok = e.get("n_answered")
                sentence = degenerate_sentence(task, where, n_answered=n_ok, n_scored=n_scored(e))
                out.append({"text": who + sentence, "mark": True})
    return out


def indicator_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """Validity indicators of every (run, task) that has them, with warning lines; a
    population run's as distributions across its respondents."""
    seen = {
        n
        for r in runs
        for e in r.tasks.values()
        for a in [e, *administrations(e)]
        for n in a.get("indicators") or {}
    }
    present = [n for n in THRESHOLDS if n in seen]
    out = []
    for r in runs:
        sp = _spreads(r)
        for task, e in r.tasks.items():
            if task in sp:
                out += [_population_indicators(r, s, present) for s in sp[task] if s.indicators]
                continue
            ind = e.get("indicators")
            if ind:
                cells = [_indicator_cell(name, ind.get(name)) for name in present]
                warnings = warnings_of(ind)
                row = {"run": r.label, "task": task, "cells": cells, "warnings": warnings}
                out.append({**row, "population": False})
    return out


def _indicator_cell(name: str, i: dict[str, Any] | None) -> dict[str, Any]:
    if i is None:
        return {
            "name": SHORT_NAMES.get(name, name),
            "text": "",
            "fired": False,
            "title": "not measured",
        }
    return {
        "name": SHORT_NAMES.get(name, name),
        "text": fmt(i.get("value")),
        "fired": bool(i.get("fired")),
        "title": i.get("reason") or f"threshold {i.get('threshold')}",
    }


def _population_indicators(r: RunData, s: TaskSpread, present: list[str]) -> dict[str, Any]:
    """One population row: per indicator mean (min–max) across respondents and how many went
    beyond the threshold."""
    by = {i.indicator: i for i in s.indicators}
    cells = []
    for name in present:
        i = by.get(name)
        if i is None:
            cells.append(_indicator_cell(name, None))
            continue
        text = f"{fmt(i.mean)} ({fmt(i.min)}–{fmt(i.max)}); {i.n_fired} of {s.n_cells} beyond"
        title = (
            f"mean (min–max) across {i.n} respondent cells, SD {fmt(i.sd)}; "
            f"{i.n_fired} beyond the threshold"
        )
        cells.append(
            {
                "name": SHORT_NAMES.get(name, name),
                "text": text,
                "fired": i.n_fired > 0,
                "title": i.reason or title,
            }
        )
    group = f" ({s.group})" if s.group else ""
    label = f"{r.label} (population: {s.n_respondents} respondents)"
    return {
        "run": label,
        "task": s.task + group,
        "cells": cells,
        "warnings": [],
        "population": True,
    }
