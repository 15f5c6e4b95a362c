"""``psym import logprobs``: generation probabilities computed elsewhere, as an ordinary run."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.administer.import_logprobs import COLUMNS, import_logprobs
from psymetrics_core.administer.options import parse_task_args
from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import fmt, stdout, table


@click.command("logprobs")
@click.argument("csv_path", metavar="CSV", type=click.Path(path_type=Path))
@click.option("--task", required=True, help="Task the scores belong to (e.g. value-portrait).")
@click.option("--model", required=True, help="The model that was scored (its name in the run).")
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(),  # a str: '' is refused as given, not read as the current folder
    help="Run folder to write (results.json, samples.jsonl).",
)
@click.option(
    "--task-arg",
    "task_args",
    multiple=True,
    metavar="TASK.KEY=VALUE",
    help="Task option, as for `psym eval` (e.g. value-portrait.length=mean).",
)
@click.pass_context
def logprobs_cmd(
    ctx: click.Context,
    csv_path: Path,
    task: str,
    model: str,
    output: str,
    task_args: tuple[str, ...],
) -> None:
    """Write a run of TASK from a CSV of scenario,response,logprob,tokens rows (summed
    log-probability of each response and the number of tokens summed, e.g. as Song et al. 2025
    publish them), so every analysis reads it like a run of `psym eval`."""
    if not output.strip():
        raise PsymError(f"--output {output!r}: an empty path; expected a folder")
    session = session_of(ctx)
    options = parse_task_args(task_args, [task], session=session)
    results = import_logprobs(csv_path, task, model, Path(output), session, options)
    entry = results["tasks"][task]
    t = table(f"model: {model}  (imported from {csv_path})", ["scale", "score", "n"])
    notes = []
    for name, s in entry["scales"].items():
        t.add_row(name, fmt(s["score"]) + (" *" if s.get("reason") else ""), str(s.get("n", "")))
        if s.get("reason"):
            notes.append(f"* {name}: {s['reason']}")
    stdout.print(t)
    for line in notes + ([f"{task}: {entry['scoring_note']}"] if entry.get("scoring_note") else []):
        stdout.print(line, markup=False, soft_wrap=True)
    click.echo(
        f"imported {entry['n_answered']} of {entry['n_items']} scenarios "
        f"({', '.join(COLUMNS)}); results: {Path(output) / 'results.json'}   "
        f"samples: {Path(output) / 'samples.jsonl'}"
    )
