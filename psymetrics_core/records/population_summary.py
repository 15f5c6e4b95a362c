"""The first screen of a population run (``psym eval --population``): each scale's spread
across respondents, computed from results.json's ``runs`` (one run per respondent cell).

results.json keeps ``tasks.X`` equal to its first run (report and export read it so); this
summary is what the screen shows instead, so that respondent 1 is never read as the population.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ScaleSpread", "TaskSpread", "is_population_run", "population_summary"]


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
class TaskSpread:
    """One task (and level of the run's other conditions, ``group``; "" when there is none)."""

    task: str
    group: str
    n_cells: int  # administrations: respondents x repeats
    n_respondents: int
    n_degenerate: int  # cells whose answers a validity indicator flagged
    scales: list[ScaleSpread] = field(default_factory=list)


def is_population_run(results: dict[str, Any]) -> bool:
    """Whether the run's cells vary the ``respondent`` facet (``--population``)."""
    return any(
        "respondent" in (run.get("facets") or {})
        for entry in (results.get("tasks") or {}).values()
        for run in entry.get("runs") or []
    )


def population_summary(results: dict[str, Any]) -> list[TaskSpread]:
    """Per task (and other-condition level), each scale's n, mean, SD, min and max across the
    respondent cells of ``results``' runs, and how many cells were flagged degenerate."""
    out: list[TaskSpread] = []
    for task, entry in results["tasks"].items():
        runs = entry.get("runs") or [entry]
        groups: dict[str, list[dict[str, Any]]] = {}
        for run in runs:
            facets = run.get("facets") or {}
            rest = " ".join(v for k, v in facets.items() if k != "respondent")
            groups.setdefault(rest, []).append(run)
        for group, cells in groups.items():
            names = list(dict.fromkeys(s for r in cells for s in r["scales"]))
            people = len({(r.get("facets") or {}).get("respondent") for r in cells})
            out.append(TaskSpread(task, group, len(cells), people, sum(_fired(r) for r in cells),
                                  [_spread(s, cells) for s in names]))  # fmt: skip
    return out


def _fired(run: dict[str, Any]) -> bool:
    ind = run.get("indicators") or {}
    return any(isinstance(i, dict) and i.get("fired") for i in ind.values())


def _spread(scale: str, cells: list[dict[str, Any]]) -> ScaleSpread:
    values = [
        float(r["scales"][scale]["score"])
        for r in cells
        if scale in r["scales"] and r["scales"][scale].get("score") is not None
    ]
    if not values:
        return ScaleSpread(scale, 0, None, None, None, None, "no respondent has a score")
    sd = statistics.stdev(values) if len(values) > 1 else None
    reason = None if sd is not None else "one score: no SD"
    return ScaleSpread(scale, len(values), statistics.fmean(values), sd, min(values),
                       max(values), reason)  # fmt: skip
