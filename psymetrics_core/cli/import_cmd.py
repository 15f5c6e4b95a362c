"""``psym import``: other frameworks' questionnaire files as instrument specs, and answers or
log-probabilities computed elsewhere as ordinary run directories."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.cli.import_answers_cmd import answers_cmd
from psymetrics_core.cli.import_logprobs_cmd import logprobs_cmd
from psymetrics_core.instruments.psychobench import import_psychobench
from psymetrics_core.instruments.spec import load_instrument


@click.group("import")
def import_cmd() -> None:
    """Bring in questionnaires of other frameworks, or answers and log-probabilities made
    elsewhere as runs that every analysis reads."""


@import_cmd.command("psychobench")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(),  # checked by base.writing: one line, '' named as given
    help="Folder to write one <task>/instrument.yaml + items.csv per scale into.",
)
@click.option("--prefix", default="pbi-", show_default=True, help="Prefix of the task ids.")
def psychobench_cmd(path: Path, output: str, prefix: str) -> None:
    """Convert a PsychoBench questionnaires.json (items, keys, norms) and report the fixes."""

    report = import_psychobench(path, output, prefix)
    for folder in report.written:
        load_instrument(folder)  # what we wrote must load
    for line in report.fixes:
        click.echo(f"fixed: {line}")
    for line in report.skipped:
        click.echo(f"skipped: {line}")
    click.echo(
        f"wrote {len(report.tasks)} task(s) to {output}: {', '.join(report.tasks) or 'none'}"
    )
    if report.tasks:
        click.echo(
            f"use them with: PSYM_INSTRUMENTS_PATH={output} psym eval --tasks {report.tasks[0]}"
        )


import_cmd.add_command(answers_cmd)
import_cmd.add_command(logprobs_cmd)
