"""``psym show``: an instrument's scales, keying, citation and licence."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from psymetrics_core.administer.describe import describe_task
from psymetrics_core.administer.options import parse_task_args
from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import print_json, stdout, table

if TYPE_CHECKING:
    from psymetrics_core.administer.describe import TaskDescription


@click.command("show")
@click.argument("task")
@click.option(
    "--task-arg",
    "task_args",
    multiple=True,
    metavar="TASK.KEY=VALUE",
    help="Task option, as for `psym eval` (items may depend on it).",
)
@click.option("--data", multiple=True, metavar="[TASK=]PATH", help="= --task-arg TASK.data=PATH.")
@click.option("--json", "as_json", is_flag=True, help="Everything, every item with id and text.")
@click.pass_context
def show_cmd(
    ctx: click.Context, task: str, task_args: tuple[str, ...], data: tuple[str, ...], as_json: bool
) -> None:
    """Show a task's scales, items, reverse keying, citation and licence status."""

    session = session_of(ctx)
    desc = describe_task(task, session, parse_task_args(task_args, [task], data, session=session))
    if as_json:
        print_json(desc.to_json())
        return
    _print_description(desc)


def _print_description(desc: TaskDescription) -> None:
    """The description as text and tables on stdout."""
    inst = desc.instrument
    n_items = "?" if desc.n_items is None else str(desc.n_items)
    stdout.print(
        f"[bold]{inst.name}[/bold]  (task [cyan]{inst.id}[/cyan], {inst.kind}, "
        f"version {inst.version}, {n_items} items, forms: "
        f"{', '.join(inst.forms)})"
    )
    if desc.items_note:
        stdout.print(f"items:    {desc.items_note}", markup=False)
    stdout.print(f"citation: {inst.citation}", markup=False)
    stdout.print(f"licence:  {inst.license_status}", markup=False)
    stdout.print(f"items:    {inst.item_source}", markup=False)
    if not inst.texts_shipped:
        stdout.print(
            "item texts: NOT shipped with this plugin (licence); supply them with "
            f"`psym eval --items {inst.id}=FILE.csv` (columns id,text[,question])",
            markup=False,
        )
    if desc.flagged:
        stdout.print(
            "not scored: " + ", ".join(f"{k} ({v})" for k, v in desc.flagged.items()),
            markup=False,
        )
    for n, rs in inst.response_scales.items():
        opts = ", ".join(f"{o.value}={o.label}" for o in rs.options)
        stdout.print(f"response scale '{n}': {opts}", markup=False)
    _print_items(desc)
    t = table("scales", ["scale", "method", "items", "reverse-keyed"])
    for name, s in desc.scales.items():
        t.add_row(
            name, s.method, f"{len(s.items)}: " + " ".join(s.items), " ".join(s.reverse) or "—"
        )
    stdout.print(t)
    for name, s in desc.scales.items():
        if s.higher_is:
            stdout.print(f"{name}: higher = {s.higher_is}", markup=False)
    _print_norms(desc)
    if inst.human_loadings is not None:
        h = inst.human_loadings
        stdout.print(
            f"human loadings: {h.describe()} [{h.file}, raw item direction; "
            "compared by `psym analyze --efa`]",
            markup=False,
        )
    stdout.print(f"scoring: {inst.scoring_rule}", markup=False)
    if inst.notes:
        stdout.print(f"notes: {inst.notes}", markup=False)


def _print_items(desc: TaskDescription) -> None:
    """Every item with its id and text (and, for questionnaires, its scales and keying)."""
    if not desc.items:
        return
    keyed = "scales" in desc.items[0]
    t = table("items", ["id", "text", "scales", "reverse"] if keyed else ["id", "text"])
    for it in desc.items:
        text = it["text"] or "— (not shipped: --items)"
        extra = [", ".join(it["scales"]) or "—", "R" if it["reverse"] else ""] if keyed else []
        t.add_row(str(it["id"]), text, *extra)
    stdout.print(t)


def _print_norms(desc: TaskDescription) -> None:
    """Print the human norm groups, one row per scale and group (the default group first)."""
    if not desc.norm_groups:
        return
    t = table(
        f"human norms (default group for z-scores: {desc.norm_groups[0]})",
        ["scale", "group", "mean", "SD", "n", "source"],
    )
    for name, s in desc.scales.items():
        for g in s.norms:
            year = f" ({g.year})" if g.year and str(g.year) not in g.source else ""
            t.add_row(
                name,
                g.group,
                f"{g.mean:g}",
                f"{g.sd:g}",
                "—" if g.n is None else str(g.n),
                g.source + year,
            )
    stdout.print(t)
