"""``psym report``: a self-contained HTML report of one or more run directories."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.administer.preflight import check_label
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import stderr
from psymetrics_core.cli.population_options import population_options
from psymetrics_core.report import write_report


def _check_label(value: str) -> str:

    return check_label(value)


@click.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--output",
    "-o",
    type=click.Path(),  # checked by base.writing: one line, '' named as given
    default="report.html",
    show_default=True,
    help="HTML file to write.",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    callback=lambda _c, _p, v: tuple(_check_label(x) for x in v),
    help="Name of each run in the report, in the order of RUN_DIRS [default: the run's "
    "--label, else its directory name].",
)
@click.option(
    "--human",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Human answers (an answers CSV or a distribution table, as `psym fidelity`): adds the "
    "section 'How human-like are the answers?' comparing each run with them.",
)
@click.option(
    "--human-group",
    "human_groups",
    multiple=True,
    metavar="COLUMN",
    help="With --human: a group column of the human file (repeatable): fidelity per group and "
    "steerability.",
)
@population_options(
    group_help="Population runs: the invariance ladder across model, condition or a "
    "respondent label."
)
@click.pass_context
def report_cmd(
    ctx: click.Context,
    run_dirs: tuple[Path, ...],
    output: str,
    labels: tuple[str, ...],
    human: Path | None,
    human_groups: tuple[str, ...],
    population: PopulationOptions,
) -> None:
    """Write one HTML file (no network requests, same runs = same bytes) comparing RUN_DIRS."""

    if human_groups and human is None:
        raise PsymError("--human-group: give --human FILE too")
    out = write_report(
        list(run_dirs),
        output,
        labels,
        session=session_of(ctx),
        population=population,
        human=human,
        human_groups=human_groups,
    )
    stderr.print(f"report: {out} ({out.stat().st_size // 1024} KiB)", markup=False)
