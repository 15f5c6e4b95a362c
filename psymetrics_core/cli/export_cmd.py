"""``psym export lm-eval``: write lm-evaluation-harness task folders for installed instruments."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import stderr, stdout
from psymetrics_core.export import export_lm_eval
from psymetrics_core.export.tidy import export_table


@click.group("export")
def export_cmd() -> None:
    """Export instruments to other evaluation tools, or run records as tidy tables."""


@export_cmd.command("lm-eval")
@click.option(
    "--tasks",
    "-t",
    "tasks",
    multiple=True,
    help="Task ids to export (repeat or comma-separate); default: every installed instrument.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(),  # checked by base.writing: one line, '' named as given
    default="tasks",
    show_default=True,
    help="Folder to write the task folders into (given to lm_eval as --include_path).",
)
@click.pass_context
def lm_eval_cmd(ctx: click.Context, tasks: tuple[str, ...], output: str) -> None:
    """Write psym_<task> (logprob) and psym_<task>_gen (generate) lm-eval tasks."""

    ids = [t.strip() for chunk in tasks for t in chunk.split(",") if t.strip()]
    report = export_lm_eval(output, ids or None, session=session_of(ctx))
    for note in report.skip_notes():
        stderr.print(f"psym: skipped {note}", markup=False, soft_wrap=True)
    stdout.print(
        f"wrote {len(report.tasks)} lm-eval tasks to {output}: {', '.join(report.tasks) or 'none'}"
        f"\nrun: lm_eval --model hf --model_args pretrained=DIR --tasks psym "
        f"--include_path {output} --apply_chat_template",
        markup=False,
        soft_wrap=True,
    )


def _tidy_command(table: str, what: str) -> click.Command:
    @click.command(
        table,
        help=f"{what} of RUN_DIRS as a tidy CSV or parquet table (polars). In CSV, a text cell "
        "starting with =, +, -, @, a tab or a carriage return (and not a number) gets a leading "
        "' so that a spreadsheet shows it as text instead of running it as a formula.",
    )
    @click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
    @click.option(
        "--format",
        "fmt",
        type=click.Choice(["csv", "parquet"]),
        default=None,
        help="File format [default: from the --output suffix, else csv].",
    )
    @click.option(
        "--output",
        "-o",
        type=click.Path(),  # checked by base.writing: one line, '' named as given
        required=True,
        help="File to write (never one of the runs' own record files).",
    )
    @click.pass_context
    def cmd(ctx: click.Context, run_dirs: tuple[Path, ...], fmt: str | None, output: str) -> None:

        chosen = fmt or ("parquet" if output.endswith(".parquet") else "csv")
        out, n = export_table(table, list(run_dirs), chosen, output, session_of(ctx))
        stdout.print(f"wrote {n} rows of {table} to {out} ({chosen})", markup=False)

    return cmd


export_cmd.add_command(
    _tidy_command("scores", "Scale scores per (run, label, task, condition, repeat, seed, scale)")
)
export_cmd.add_command(
    _tidy_command(
        "population",
        "Population runs: each scale's and validity indicator's spread across respondents (n, "
        "mean, SD, min, max; per task and other-condition group)",
    )
)
export_cmd.add_command(_tidy_command("samples", "One row per administered prompt"))
export_cmd.add_command(_tidy_command("judge", "One row per judge-model call"))
