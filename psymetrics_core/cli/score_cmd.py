"""``psym score``: score existing responses or generations with a task's own scoring."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from psymetrics_core.administer.answers import score_answers
from psymetrics_core.administer.options import parse_task_args
from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import fmt, print_json, stdout, table
from psymetrics_core.cli.judge_options import judge_options

if TYPE_CHECKING:
    from psymetrics_core.administer.answers import ScoredAnswers


@click.command("score")
@click.option("--task", required=True, help="Task id whose key (or scoring rule) is used.")
@click.option(
    "--responses",
    required=True,
    type=click.Path(path_type=Path),
    help="Questionnaires: CSV respondent,item,response. Free-text and judged tasks: CSV or "
    "JSONL with item,text[,respondent], or a run's samples.jsonl.",
)
@click.option("--form", default="original", show_default=True, help="Instrument form.")
@click.option(
    "--task-arg",
    "task_args",
    multiple=True,
    metavar="TASK.KEY=VALUE",
    help="Task option, as for `psym eval` (e.g. housing.data=TABLE.csv).",
)
@click.option("--data", multiple=True, metavar="[TASK=]PATH", help="= --task-arg TASK.data=PATH.")
@judge_options("Judge backend for judged tasks.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print {"<task>": {"<respondent>": {"<scale>": score}}}.',
)
@click.pass_context
def score_cmd(
    ctx: click.Context,
    task: str,
    responses: Path,
    form: str,
    task_args: tuple[str, ...],
    data: tuple[str, ...],
    judge_model: str | None,
    judge_model_args: str,
    judge_max_new_tokens: int | None,
    as_json: bool,
) -> None:
    """Score human data, earlier model answers or existing generations per respondent."""

    session = session_of(ctx)
    scored = score_answers(
        task,
        responses,
        session=session,
        form=form,
        options=parse_task_args(task_args, [task], data, session=session),
        judge_model=judge_model,
        judge_model_args=judge_model_args,
        judge_max_new_tokens=judge_max_new_tokens,
    )
    if as_json:
        print_json(scored.to_json())
        return
    _print_scores(scored)


def _print_scores(scored: ScoredAnswers) -> None:
    """One row per respondent: each scale's score with answered/total items (incomplete: *)."""
    scales = list(next(iter(scored.respondents.values())))
    t = table(
        f"{scored.task}: scores per respondent (answered/total items)", ["respondent", *scales]
    )
    incomplete = 0
    for who, res in scored.respondents.items():
        cells = []
        for s in scales:
            r = res[s]
            if r.n_items is None or r.n_answered is None:  # a free-text task's score: no count
                cells.append(fmt(r.score))
                continue
            incomplete += r.incomplete
            cell = f"{fmt(r.score)} ({r.n_answered}/{r.n_items})"
            cells.append(f"[bold yellow]{cell} *[/bold yellow]" if r.incomplete else cell)
        t.add_row(who, *cells)
    stdout.print(t)
    if incomplete:
        stdout.print(
            f"* {incomplete} incomplete score(s): computed from fewer items than the scale has "
            "(a sum over them is not comparable with a complete sum or with norms)"
        )
