"""The first screen of a population run (``psym eval --population``): the population, then
per task each scale's spread across respondents and each validity indicator's distribution,
read from results.json's population entry (``records.population_summary``)."""

from __future__ import annotations

from typing import Any

from psymetrics_core.administer.config import RunConfig
from psymetrics_core.administer.ranges import range_text
from psymetrics_core.cli.console import fmt, stdout, table
from psymetrics_core.instruments.indicators import SHORT_NAMES
from psymetrics_core.records.population_summary import (
    TaskSpread,
    degenerate_line,
    population_summary,
)

__all__ = ["print_population", "model_name"]


def model_name(results: dict[str, Any]) -> str:
    """The run's label, with the served model's name when they differ."""
    label = results.get("label")
    model = results["model"]
    return model if not label or label == model else f"{label} ({model})"


def _line(text: str) -> None:
    stdout.print(text, markup=False, highlight=False, soft_wrap=True)


def print_population(
    results: dict[str, Any],
    config: RunConfig,
    ranges: dict[tuple[str, str], tuple[float, float]] | None = None,
) -> None:
    """A population run's screen: the population, then per task each scale's spread across
    respondents (results.json's ``tasks.X.population``; ``runs[0]`` is one respondent's cell)
    with its score range (``ranges``: ``administer.ranges.scale_ranges``)."""
    sample = f", --sample {config.sample}" if config.sample is not None else ""
    spreads = population_summary(results)
    n = max((s.n_respondents for s in spreads), default=0)
    _line(
        f"population: {config.population}  respondents: {n}  "
        f"template: {config.persona_template}{sample}  model: {model_name(results)}"
    )
    for spread in spreads:
        _print_spread(spread, ranges or {})


def _print_spread(spread: TaskSpread, ranges: dict[tuple[str, str], tuple[float, float]]) -> None:
    """One task's (and other-condition level's) scale table, indicator table and count of
    degenerate answer patterns."""
    where = f" ({spread.group})" if spread.group else ""
    cells = "respondents'"
    if spread.n_cells != spread.n_respondents:  # --repeats: n counts administrations
        where += f" ({spread.n_cells} administrations)"
        cells = "administrations'"
    t = table(
        f"{spread.task}: scale scores across {spread.n_respondents} respondents{where}",
        ["scale", "range", "n", "mean", "SD", "min", "max"],
    )
    for s in spread.scales:
        span = ranges.get((spread.task, s.scale))
        row = [s.scale + " *" * bool(s.reason), range_text(span) if span else "—", str(s.n)]
        t.add_row(*row, fmt(s.mean), fmt(s.sd), fmt(s.min), fmt(s.max))
    stdout.print(t)
    for s in spread.scales:
        if s.reason:
            _line(f"* {spread.task}.{s.scale}: {s.reason}")
    if spread.indicators:
        t = table(
            f"{spread.task}: validity indicators across {cells[:-1]}",
            ["indicator", "n", "mean", "SD", "min", "max", "beyond threshold"],
        )
        order = list(SHORT_NAMES)  # the single-model screen's column order
        ranked = sorted(
            spread.indicators,
            key=lambda i: order.index(i.indicator) if i.indicator in order else len(order),
        )
        for i in ranked:
            stats = [fmt(i.mean), fmt(i.sd), fmt(i.min), fmt(i.max)]
            name = SHORT_NAMES.get(i.indicator, i.indicator)
            t.add_row(name, str(i.n), *stats, f"{i.n_fired} of {spread.n_cells}")
        stdout.print(t)
    _line(degenerate_line(spread))
