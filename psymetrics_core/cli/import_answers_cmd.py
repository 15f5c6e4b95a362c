"""``psym import answers``: a ratings CSV made elsewhere written as an ordinary run directory."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.administer.imported import import_answers
from psymetrics_core.cli import session_of


@click.command("answers")
@click.argument("csv_path", metavar="CSV", type=click.Path(path_type=Path))
@click.option("--task", required=True, help="Task id whose key scores the answers (e.g. pvq40).")
@click.option("--model", required=True, help="The model that gave the answers (its name).")
@click.option(
    "--condition",
    default=None,
    help="Every row's condition (e.g. reversed-options); else the CSV's condition column, "
    "else original.",
)
@click.option("--form", default="original", show_default=True, help="Instrument form.")
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(path_type=Path),
    help="Run directory to write (results.json, samples.jsonl).",
)
@click.option("--overwrite", is_flag=True, help="Replace a run already in --output.")
@click.pass_context
def answers_cmd(
    ctx: click.Context,
    csv_path: Path,
    task: str,
    model: str,
    condition: str | None,
    form: str,
    output: Path,
    overwrite: bool,
) -> None:
    """Write answers given elsewhere (CSV respondent,item,response[,condition]) as a run.

    Each respondent is one administration (repeat) of MODEL; every analysis reads the run
    (`psym analyze RUN`). A missing or empty response stays missing.
    """
    run = import_answers(
        csv_path,
        task,
        model,
        output,
        session=session_of(ctx),
        condition=condition,
        form=form,
        overwrite=overwrite,
    )
    click.echo(
        f"wrote {run.output}: {run.task} answered by {model}, {run.n_rows} row(s), "
        f"{len(run.respondents)} respondent(s) x {len(run.conditions)} condition(s) "
        f"({', '.join(run.conditions)}), {run.n_missing} missing answer(s)"
    )
    click.echo(f"analyse it with: psym analyze {run.output}")
