"""The first screen of a population run (``psym eval --population``): the population, then
per task each scale's spread across respondents (``records.population_summary``)."""

from __future__ import annotations

from typing import Any

from psymetrics_core.administer.config import RunConfig
from psymetrics_core.cli.console import fmt, stdout, table
from psymetrics_core.records.population_summary import population_summary

__all__ = ["print_population", "model_name"]


def model_name(results: dict[str, Any]) -> str:
    """The run's label, with the served model's name when they differ."""
    label = results.get("label")
    model = results["model"]
    return model if not label or label == model else f"{label} ({model})"


def print_population(results: dict[str, Any], config: RunConfig) -> None:
    """A population run's screen: the population, then per task each scale's spread across
    respondents (results.json's ``tasks.X`` is only the first cell: never shown as the run)."""
    sample = f", --sample {config.sample}" if config.sample is not None else ""
    n = len({run["facets"].get("respondent") for e in results["tasks"].values()
             for run in e.get("runs") or [] if run.get("facets")})  # fmt: skip
    stdout.print(
        f"population: {config.population}  respondents: {n}  "
        f"template: {config.persona_template}{sample}  model: {model_name(results)}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for spread in population_summary(results):
        where = f" ({spread.group})" if spread.group else ""
        cells = "respondents'"
        if spread.n_cells != spread.n_respondents:  # --repeats: n counts administrations
            where += f" ({spread.n_cells} administrations)"
            cells = "administrations'"
        t = table(
            f"{spread.task}: scale scores across {spread.n_respondents} respondents{where}",
            ["scale", "n", "mean", "SD", "min", "max"],
        )
        for s in spread.scales:
            t.add_row(s.scale + " *" * bool(s.reason), str(s.n), fmt(s.mean), fmt(s.sd),
                      fmt(s.min), fmt(s.max))  # fmt: skip
        stdout.print(t)
        for s in spread.scales:
            if s.reason:
                stdout.print(f"* {spread.task}.{s.scale}: {s.reason}", markup=False)
        stdout.print(
            f"{spread.task}: {spread.n_degenerate} of {spread.n_cells} {cells} answers flagged "
            "degenerate (a validity indicator beyond its threshold)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
