"""The population entry of a population run (``psym eval --population``): each scale's spread
across respondents and each validity indicator's distribution, computed from results.json's
``runs`` (one run per respondent cell) and recorded as ``tasks.<task>.population``.

The population entry is what every screen of a population run shows (``psym eval``, ``psym
report``, ``psym export population``), and ``tasks.X``'s own fields describe every cell
(``records.population_task``), so that respondent 1 is never read as the population. This module
is the one home of that computation: ``with_population`` records it when the run is written,
``population_summary`` reads the recorded entry back (and computes it for a record written
before the entry existed).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from psymetrics_core.records.population_task import population_task

__all__ = [
    "ScaleSpread",
    "IndicatorSpread",
    "TaskSpread",
    "is_population_run",
    "population_summary",
    "compute_population",
    "with_population",
    "fired",
    "degenerate_line",
]


@dataclass(frozen=True)
class ScaleSpread:
    """One scale's scores across the respondents that have one (sample SD, n - 1)."""

    scale: str
    n: int
    mean: float | None
    sd: float | None
    min: float | None
    max: float | None
    reason: str | None = None


@dataclass(frozen=True)
class IndicatorSpread:
    """One validity indicator across respondents: its values' spread and how many fired."""

    indicator: str
    n: int  # cells with a value
    mean: float | None
    sd: float | None
    min: float | None
    max: float | None
    n_fired: int
    reason: str | None = None


@dataclass(frozen=True)
class TaskSpread:
    """One task (and level of the run's other conditions, ``group``; "" when there is none)."""

    task: str
    group: str
    n_cells: int  # administrations: respondents x repeats
    n_respondents: int
    n_degenerate: int  # cells whose answers a validity indicator flagged
    scales: list[ScaleSpread] = field(default_factory=list)
    indicators: list[IndicatorSpread] = field(default_factory=list)


def is_population_run(results: dict[str, Any]) -> bool:
    """Whether the run's cells vary the ``respondent`` facet (``--population``)."""
    return any(
        "respondent" in (run.get("facets") or {})
        for entry in (results.get("tasks") or {}).values()
        for run in entry.get("runs") or []
    )


def fired(indicators: dict[str, Any] | None) -> bool:
    """Whether any validity indicator of one answer pattern went beyond its threshold."""
    return any(isinstance(i, dict) and i.get("fired") for i in (indicators or {}).values())


def compute_population(task: str, entry: dict[str, Any]) -> list[TaskSpread]:
    """Per level of the other conditions, each scale's n, mean, SD, min and max across the
    respondent cells of ``entry``'s runs, each indicator's distribution, and how many cells
    were flagged degenerate."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for run in entry.get("runs") or [entry]:
        facets = run.get("facets") or {}
        rest = " ".join(v for k, v in facets.items() if k != "respondent")
        groups.setdefault(rest, []).append(run)
    out = []
    for group, cells in groups.items():
        names = list(dict.fromkeys(s for r in cells for s in r["scales"]))
        kinds = list(dict.fromkeys(i for r in cells for i in r.get("indicators") or {}))
        people = len({(r.get("facets") or {}).get("respondent") for r in cells})
        scales = [_scale_spread(s, cells) for s in names]
        indicators = [_indicator_spread(i, cells) for i in kinds]
        n_bad = sum(fired(r.get("indicators")) for r in cells)
        out.append(TaskSpread(task, group, len(cells), people, n_bad, scales, indicators))
    return out


def with_population(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` with ``tasks.<task>.population`` recorded and the task-level fields over
    every cell (``population_task``) when the run is a population run (a single-model run is
    returned unchanged)."""
    if not is_population_run(results):
        return results
    tasks = {}
    for task, entry in results["tasks"].items():
        groups = [_record(s) for s in compute_population(task, entry)]
        tasks[task] = population_task({**entry, "population": groups}, groups)
    return {**results, "tasks": tasks}


def population_summary(results: dict[str, Any]) -> list[TaskSpread]:
    """Per task (and other-condition level) the population entry recorded in ``results``
    (computed by ``compute_population`` where a record predates it)."""
    out: list[TaskSpread] = []
    for task, entry in results["tasks"].items():
        recorded = entry.get("population")
        if recorded is None:
            out += compute_population(task, entry)
        else:
            out += [_read(task, g) for g in recorded]
    return out


def degenerate_line(spread: TaskSpread) -> str:
    """How many of a population's answer patterns a validity indicator flagged, as every screen
    of a population run says it."""
    cells = "respondents'" if spread.n_cells == spread.n_respondents else "administrations'"
    return (
        f"{spread.task}: {spread.n_degenerate} of {spread.n_cells} {cells} answers flagged "
        "degenerate (a validity indicator beyond its threshold)"
    )


def _values(cells: list[dict[str, Any]], key: str, name: str, value: str) -> list[float]:
    out = []
    for r in cells:
        x = (r.get(key) or {}).get(name)
        v = x.get(value) if isinstance(x, dict) else None
        if isinstance(v, int | float) and not isinstance(v, bool):
            out.append(float(v))
    return out


def _stats(values: list[float]) -> tuple[float | None, float | None, float | None, float | None]:
    """Mean, sample SD (None for fewer than two values), min and max of ``values``."""
    if not values:
        return None, None, None, None
    sd = statistics.stdev(values) if len(values) > 1 else None
    return statistics.fmean(values), sd, min(values), max(values)


def _scale_spread(scale: str, cells: list[dict[str, Any]]) -> ScaleSpread:
    values = _values(cells, "scales", scale, "score")
    reason = None
    if not values:
        reason = "no respondent has a score"
    elif len(values) == 1:
        reason = "one score: no SD"
    return ScaleSpread(scale, len(values), *_stats(values), reason=reason)


def _indicator_spread(name: str, cells: list[dict[str, Any]]) -> IndicatorSpread:
    values = _values(cells, "indicators", name, "value")
    n_fired = sum(bool(((r.get("indicators") or {}).get(name) or {}).get("fired")) for r in cells)
    reason = None
    if not values:
        reason = "no respondent has a value"
    elif len(values) == 1:
        reason = "one value: no SD"
    return IndicatorSpread(name, len(values), *_stats(values), n_fired=n_fired, reason=reason)


def _record(spread: TaskSpread) -> dict[str, Any]:
    """``spread`` as ``tasks.<task>.population[]`` (``records.results.PopulationGroup``)."""

    def strip(d: dict[str, Any], key: str) -> dict[str, Any]:
        return {k: v for k, v in d.items() if k != key and not (k == "reason" and v is None)}

    return {
        "group": spread.group,
        "n_cells": spread.n_cells,
        "n_respondents": spread.n_respondents,
        "n_degenerate": spread.n_degenerate,
        "scales": {s.scale: strip(asdict(s), "scale") for s in spread.scales},
        "indicators": {i.indicator: strip(asdict(i), "indicator") for i in spread.indicators},
    }


def _read(task: str, group: dict[str, Any]) -> TaskSpread:
    """One recorded ``population`` group back as a ``TaskSpread``."""
    scales = [
        ScaleSpread(scale=name, **{"reason": None, **s}) for name, s in group["scales"].items()
    ]
    indicators = [
        IndicatorSpread(indicator=name, **{"reason": None, **i})
        for name, i in (group.get("indicators") or {}).items()
    ]
    return TaskSpread(
        task,
        group["group"],
        group["n_cells"],
        group["n_respondents"],
        group["n_degenerate"],
        scales,
        indicators,
    )
