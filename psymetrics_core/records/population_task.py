"""A population run's task-level fields (``tasks.<task>`` of ``psym eval --population``): the
whole population, never the first respondent's cell.

A single-model run's ``tasks.<task>`` is its first administration (``runs[0]``). In a population
run that would be respondent 1, so ``population_task`` rewrites the fields that describe answers:
the counts are summed over every cell in ``runs``, ``parse_rate`` is over all of them, each
scale's ``score`` is the population entry's mean (``tasks.<task>.population``; None with a reason
when the run has other conditions, whose levels each have their own mean there) with its item
counts summed over the cells, ``condition`` is ``population`` and ``facets`` empty. The
indicators of one answer pattern and a task kind's own detail fields (one cell's) are left out:
the population entry gives each indicator's distribution, ``runs`` every cell.
"""

from __future__ import annotations

from typing import Any

__all__ = ["POPULATION_CONDITION", "TASK_FIELDS", "population_task", "summed"]

POPULATION_CONDITION = "population"

# the typed fields of ``records.results.TaskEntry``: what a population entry keeps
TASK_FIELDS = (
    "scales",
    "n_items",
    "n_answered",
    "n_unparsed",
    "n_refused",
    "parse_rate",
    "norm_group",
    "indicators",
    "instrument",
    "prompt_template",
    "condition",
    "facets",
    "repeat",
    "seed",
    "form",
    "kind",
    "settings",
    "options",
    "runs",
    "population",
)

COUNTS = ("n_items", "n_answered", "n_unparsed", "n_refused")


def summed(runs: list[dict[str, Any]], key: str) -> int | None:
    """``key`` summed over ``runs`` (None when a run does not record it)."""
    values = [r.get(key) for r in runs]
    counts = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return sum(counts) if len(counts) == len(values) else None


def population_task(entry: dict[str, Any], means: list[dict[str, Any]]) -> dict[str, Any]:
    """``entry`` (a task of a population run, with its ``runs``) with its task-level fields
    describing every cell; ``means``: the recorded ``population`` groups (one per level of the
    run's other conditions)."""
    runs = entry["runs"]
    out = {k: v for k, v in entry.items() if k in TASK_FIELDS}
    for k in COUNTS:
        out[k] = summed(runs, k)
    n_items, n_answered = out["n_items"], out["n_answered"]
    out["parse_rate"] = n_answered / n_items if n_items and n_answered is not None else None
    out["scales"] = _scales(entry, runs, means)
    if "indicators" in entry:
        per_cell = {k for r in runs for k in r.get("indicators") or {}}
        across = entry["indicators"] or {}
        out["indicators"] = {k: v for k, v in across.items() if k not in per_cell}
    out["condition"] = POPULATION_CONDITION
    out["facets"] = {}
    return out


def _scales(
    entry: dict[str, Any], runs: list[dict[str, Any]], means: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Each scale: the population's mean score and the item counts of every cell."""
    names = list(dict.fromkeys(s for r in runs for s in r.get("scales") or {}))
    out = {}
    for name in names:
        cells = [r["scales"][name] for r in runs if name in (r.get("scales") or {})]
        first = (entry.get("scales") or {}).get(name) or {}
        scale: dict[str, Any] = {
            "score": None,
            "n_items": sum(c.get("n_items") or 0 for c in cells),
            "n_answered": sum(c.get("n_answered") or 0 for c in cells),
            "method": cells[0].get("method") or first.get("method"),
        }
        if len(means) == 1:
            spread = means[0]["scales"].get(name) or {}
            scale["score"] = spread.get("mean")
            if scale["score"] is None:
                scale["reason"] = spread.get("reason") or "no respondent has a score"
        else:
            scale["reason"] = (
                f"{len(means)} levels of the other conditions: each one's mean is in population"
            )
        norm = first.get("norm")
        if isinstance(norm, dict):  # the human norm group (one respondent's z left out)
            scale["norm"] = {k: v for k, v in norm.items() if k != "z"}
        out[name] = scale
    return out
