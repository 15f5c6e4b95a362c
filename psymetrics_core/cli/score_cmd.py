"""``psym score``: score existing responses or generations with a task's own scoring."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import fmt, print_json, stdout, table


@click.command("score")
@click.option("--task", required=True, help="Task id whose key (or scoring rule) is used.")
@click.option(
    "--responses",
    required=True,
    type=click.Path(path_type=Path),
    help="Questionnaires: CSV respondent,item,response. Free-text and judged tasks: CSV or "
    "JSONL with item,text[,respondent], or a run's samples.jsonl.",
)
@click.option("--form", default="original", show_default=True)
@click.option("--task-arg", "task_args", multiple=True, metavar="TASK.KEY=VALUE",
              help="Task option, as for `psym eval` (e.g. housing.data=TABLE.csv).")  # fmt: skip
@click.option("--data", multiple=True, metavar="[TASK=]PATH", help="= --task-arg TASK.data=PATH.")
@click.option("--judge-model", default=None, help="Judge backend for judged tasks.")
@click.option("--judge-model-args", default="", help="k=v,k=v arguments of the judge.")
@click.option(
    "--judge-max-new-tokens", type=click.IntRange(min=1), default=None, help="Judge reply length."
)
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
    from psymetrics_core.administer.kinds.task import Task
    from psymetrics_core.administer.options import parse_task_args
    from psymetrics_core.administer.runner import resolve_tasks

    session = session_of(ctx)
    options = parse_task_args(task_args, [task], data, session=session)
    scored: dict[str, dict[str, Any]]
    inst = session.get_instrument(task)
    if isinstance(inst, Task):
        inst = resolve_tasks([task], session, form, None, options)[0]
        assert isinstance(inst, Task)
        from psymetrics_core.administer.generations import score_generations

        scored = {
            who: entry["scales"]
            for who, entry in score_generations(
                inst,
                responses,
                session=session,
                judge_model=judge_model,
                judge_model_args=judge_model_args,
                judge_max_new_tokens=judge_max_new_tokens,
            ).items()
        }
    else:  # a questionnaire is scored from its key alone: no item texts needed
        from psymetrics_core.administer.answers import score_responses
        from psymetrics_core.administer.options import with_options

        with_options(inst, options.get(task), options.get("*"))
        scored = score_responses(task, responses, session, form)
    if as_json:
        print_json(
            {
                task: {
                    who: {s: v["score"] for s, v in scales.items()}
                    for who, scales in scored.items()
                }
            }
        )
        return
    scales = list(next(iter(scored.values())))
    t = table(f"{task}: scores per respondent (answered/total items)", ["respondent", *scales])
    incomplete = 0
    for who, res in scored.items():
        cells = []
        for s in scales:
            r = res[s]
            n_items, n_answered = r.get("n_items"), r.get("n_answered")
            if n_items is None or n_answered is None:  # a free-text task's score: no item count
                cells.append(fmt(r.get("score")))
                continue
            mark = n_answered < n_items
            incomplete += mark
            cell = f"{fmt(r.get('score'))} ({n_answered}/{n_items})"
            cells.append(f"[bold yellow]{cell} *[/bold yellow]" if mark else cell)
        t.add_row(who, *cells)
    stdout.print(t)
    if incomplete:
        stdout.print(
            f"* {incomplete} incomplete score(s): computed from fewer items than the scale has "
            "(a sum over them is not comparable with a complete sum or with norms)"
        )
