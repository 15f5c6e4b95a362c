"""``psym score``: score existing responses with a task's published key."""

from __future__ import annotations

from pathlib import Path

import click

from .console import fmt, print_json, stdout, table


@click.command("score")
@click.option("--task", required=True, help="Task id whose key scores the responses.")
@click.option(
    "--responses",
    required=True,
    type=click.Path(path_type=Path),
    help="CSV with columns respondent,item,response.",
)
@click.option("--form", default="original", show_default=True)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print {"<task>": {"<respondent>": {"<scale>": score}}}.',
)
def score_cmd(task: str, responses: Path, form: str, as_json: bool) -> None:
    """Score human data or earlier model answers (long format) per respondent."""
    from ..responses import score_responses

    scored = score_responses(task, responses, form)
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
    t = table(f"{task}: scale scores per respondent", ["respondent", *scales])
    for who, res in scored.items():
        t.add_row(who, *[fmt(res[s]["score"]) for s in scales])
    stdout.print(t)
