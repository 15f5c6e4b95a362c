"""``psym judge``: re-judge an interview run's open answers with another judge."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.administer.rejudge import rejudge
from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import stdout
from psymetrics_core.cli.interview_options import rejudge_impute_option
from psymetrics_core.cli.judge_options import judge_options


@click.command("judge")
@click.argument("run", type=click.Path(path_type=Path))
@judge_options("Backend of the judge (any backend, e.g. openai-chat).", required=True, batch=True)
@click.option(
    "--method",
    default=None,
    metavar="MODE",
    help="Judge by another interview mode than the run's, e.g. interview-logprob or "
    "interview-dimensions (the new run records it as its administration).",
)
@click.option(
    "--output", "-o", required=True, type=click.Path(path_type=Path), help="New run directory."
)
@click.option("--overwrite", is_flag=True, help="Replace the run already in --output.")
@rejudge_impute_option
@click.pass_context
def judge_cmd(
    ctx: click.Context,
    run: Path,
    judge_model: str,
    judge_model_args: str,
    judge_max_new_tokens: int | None,
    judge_batch: int | None,
    method: str | None,
    output: Path,
    overwrite: bool,
    impute: str | None,
) -> None:
    """Re-judge an interview run (--condition interview) without asking the model again."""
    results = rejudge(
        run,
        output,
        session=session_of(ctx),
        judge_model=judge_model,
        judge_model_args=judge_model_args,
        judge_max_new_tokens=judge_max_new_tokens,
        judge_batch=judge_batch,
        mode=method,
        impute=impute,
        overwrite=overwrite,
    )
    calls = results["judge"]["n_calls"]
    stdout.print(
        f"re-judged {run} with {judge_model}: {calls} judge call(s), no subject requests\n"
        f"results: {output / 'results.json'}   samples: {output / 'samples.jsonl'}   "
        f"judge: {output / 'judge.jsonl'}"
    )
