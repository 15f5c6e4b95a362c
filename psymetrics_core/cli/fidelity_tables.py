"""Rich tables of ``psym fidelity`` (rendering only; figures formatted by the library's ``fmt``
so they read as in the JSON, the exports and ``psym analyze``)."""

from __future__ import annotations

import click

from psymetrics_core.analysis.fidelity.output import SOURCES, fmt, headline
from psymetrics_core.analysis.fidelity.records import FidelityResult
from psymetrics_core.cli.console import stdout, table

__all__ = ["print_fidelity"]


def _pct(x: float) -> str:
    return "—" if x != x else f"{100 * x:.1f}%"


def print_fidelity(r: FidelityResult) -> None:
    """The headline lines, then items, scales and subgroups as tables."""
    for line in headline(r):
        click.echo(line)
    t = table(
        "per item (95% bootstrap intervals; refusals+don't know+unparsed: share of all answers)",
        ["item", "n model", "n human", "W1", "TV", "SimBench", "JSD", "KS", "non-subst. m/h"],
    )
    for it in r.items:
        t.add_row(
            it.item,
            str(it.n_model),
            str(it.n_human),
            fmt(it.w1, "w1"),
            fmt(it.tv, "tv"),
            fmt(it.simbench, "simbench"),
            fmt(it.jsd, "jsd"),
            fmt(it.ks, "ks"),
            f"{_pct(sum(it.model.nonsub))}/{_pct(sum(it.human.nonsub))}",
        )
    stdout.print(t)
    s = table(
        "per scale (means over the scale's items)",
        ["scale", "items", "representativeness", "SimBench", "TV", "JSD", "KS"],
    )
    for row in [*r.scales, r.overall]:
        s.add_row(
            row.scale,
            str(row.items),
            fmt(row.representativeness, "representativeness"),
            fmt(row.simbench, "simbench"),
            fmt(row.tv, "tv"),
            fmt(row.jsd, "jsd"),
            fmt(row.ks, "ks"),
        )
    stdout.print(s)
    if r.groups:
        g = table(
            "per human group (representativeness; steered = personas with the same label)",
            ["group", "n human", "personas", "model", "steered", "gain", "other humans"],
        )
        for grp in r.groups:
            g.add_row(
                f"{grp.column} = {grp.value}",
                str(grp.n_human),
                str(grp.n_model),
                fmt(grp.model_all, "representativeness"),
                fmt(grp.model_steered, "representativeness"),
                fmt(grp.steer_gain, "representativeness"),
                fmt(grp.human_others, "representativeness"),
            )
        stdout.print(g)
    if r.not_compared:
        click.echo(
            f"not compared ({len(r.not_compared)} items): "
            + "; ".join(f"{k} ({v})" for k, v in list(r.not_compared.items())[:10])
        )
    click.echo("formulas: " + "; ".join(f"{k}: {v}" for k, v in SOURCES.items()))
