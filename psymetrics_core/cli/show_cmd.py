"""``psym show``: an instrument's scales, keying, citation and licence."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import print_json, stdout, table


@click.command("show")
@click.argument("task")
@click.option("--task-arg", "task_args", multiple=True, metavar="TASK.KEY=VALUE",
              help="Task option, as for `psym eval` (items may depend on it).")  # fmt: skip
@click.option("--data", multiple=True, metavar="[TASK=]PATH", help="= --task-arg TASK.data=PATH.")
@click.option("--json", "as_json", is_flag=True, help="Everything, every item with id and text.")
@click.pass_context
def show_cmd(
    ctx: click.Context, task: str, task_args: tuple[str, ...], data: tuple[str, ...], as_json: bool
) -> None:
    """Show a task's scales, items, reverse keying, citation and licence status."""
    from psymetrics_core.administer.options import parse_task_args, with_options
    from psymetrics_core.administer.runner import instrument_record

    session = session_of(ctx)
    options = parse_task_args(task_args, [task], data, session=session)
    inst = with_options(session.get_instrument(task), options.get(task), options.get("*"))
    listed, items_note = _items(inst)
    scales: dict[str, dict[str, Any]] = {}
    for name, sdef in inst.scales.items():
        members = inst.scale_items(name)
        scales[name] = {
            "method": sdef.method,
            "items": [it.id for it in members],
            "reverse": [it.id for it in members if it.reverse],
            **({"higher_is": sdef.higher_is} if sdef.higher_is else {}),
            "norms": [asdict(g) for g in sdef.norms],
        }
    flagged = {it.id: it.flag for it in inst.items if it.flag}
    rscales = {
        n: {"min": r.min, "max": r.max, "labels": [o.label for o in r.options]}
        for n, r in inst.response_scales.items()
    }
    info = {
        **instrument_record(inst),
        "kind": inst.kind,
        "n_items": len(listed) if items_note is None else None,
        "items": listed,
        **({"items_note": items_note} if items_note else {}),
        "forms": list(inst.forms),
        "scales": scales,
        "flagged_items": flagged,
        "response_scales": rscales,
        "notes": inst.notes,
        "norm_groups": inst.norm_groups(),
    }
    if as_json:
        print_json(info)
        return
    n_items = str(len(listed)) if items_note is None else "?"
    stdout.print(
        f"[bold]{inst.name}[/bold]  (task [cyan]{inst.id}[/cyan], {inst.kind}, "
        f"version {inst.version}, {n_items} items, forms: "
        f"{', '.join(inst.forms)})"
    )
    if items_note:
        stdout.print(f"items:    {items_note}", markup=False)
    stdout.print(f"citation: {inst.citation}", markup=False)
    stdout.print(f"licence:  {inst.license_status}", markup=False)
    stdout.print(f"items:    {inst.item_source}", markup=False)
    if not inst.texts_shipped:
        stdout.print(
            "item texts: NOT shipped with this plugin (licence); supply them with "
            f"`psym eval --items {inst.id}=FILE.csv` (columns id,text)",
            markup=False,
        )
    if flagged:
        stdout.print(
            "not scored: " + ", ".join(f"{k} ({v})" for k, v in flagged.items()), markup=False
        )
    for n, rs in inst.response_scales.items():
        opts = ", ".join(f"{o.value}={o.label}" for o in rs.options)
        stdout.print(f"response scale '{n}': {opts}", markup=False)
    t = table("scales", ["scale", "method", "items", "reverse-keyed"])
    for name, s in scales.items():
        t.add_row(
            name,
            s["method"],
            f"{len(s['items'])}: " + " ".join(s["items"]),
            " ".join(s["reverse"]) or "—",
        )
    stdout.print(t)
    for name, s in scales.items():
        if s.get("higher_is"):
            stdout.print(f"{name}: higher = {s['higher_is']}", markup=False)
    _print_norms(inst.norm_groups(), scales)
    stdout.print(f"scoring: {inst.scoring_rule}", markup=False)
    if inst.notes:
        stdout.print(f"notes: {inst.notes}", markup=False)


def _items(inst: Any) -> tuple[list[dict[str, Any]], str | None]:
    """Every item (id, text, and scales or prompt attributes), or why they cannot be listed."""
    from psymetrics_core.administer.kinds.task import Task
    from psymetrics_core.base.errors import PsymError

    if not isinstance(inst, Task):
        return [
            {"id": it.id, "text": it.text, "scales": list(it.scales), "reverse": it.reverse,
             **({"flag": it.flag} if it.flag else {})}
            for it in inst.items
        ], None  # fmt: skip
    try:
        items = inst.load_items()
    except PsymError as exc:
        return [], f"built from the task's data: {exc}"
    return [{"id": it.id, "text": it.text, "meta": it.meta or {}} for it in items], None


def _print_norms(groups: list[str], scales: dict[str, dict[str, Any]]) -> None:
    """Print the human norm groups, one row per scale and group (the default group first)."""
    if not groups:
        return
    t = table(
        f"human norms (default group for z-scores: {groups[0]})",
        ["scale", "group", "mean", "SD", "n", "source"],
    )
    for name, s in scales.items():
        for g in s["norms"]:
            year = f" ({g['year']})" if g["year"] and str(g["year"]) not in g["source"] else ""
            t.add_row(
                name,
                g["group"],
                f"{g['mean']:g}",
                f"{g['sd']:g}",
                "—" if g["n"] is None else str(g["n"]),
                g["source"] + year,
            )
    stdout.print(t)
