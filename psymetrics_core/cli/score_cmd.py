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
    t = table(
        f"{task}: scale scores per respondent (answered/total items)", ["respondent", *scales]
    )
    incomplete = 0
    for who, res in scored.items():
        cells = []
        for s in scales:
            r = res[s]
            mark = r["n_answered"] < r["n_items"]
            incomplete += mark
            cell = f"{fmt(r['score'])} ({r['n_answered']}/{r['n_items']})"
            cells.append(f"[bold yellow]{cell} *[/bold yellow]" if mark else cell)
        t.add_row(who, *cells)
    stdout.print(t)
    if incomplete:
        stdout.print(
            f"* {incomplete} incomplete score(s): computed from fewer items than the scale has "
            "(a sum over them is not comparable with a complete sum or with norms)"
        )
