"""``psym list``: installed tasks and the plugin providing each."""

from __future__ import annotations

import click

from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import print_json, stderr, stdout, table


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the tasks as JSON instead of a table.")
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """List installed tasks with their plugin."""
    session = session_of(ctx)
    insts = session.instruments()
    rows = [
        {
            "task": i.id,
            "name": i.name,
            "items": len(i.items),
            "plugin": i.plugin.name if i.plugin else None,
            "distribution": i.plugin.distribution if i.plugin else None,
            "version": i.plugin.version if i.plugin else None,
        }
        for i in sorted(insts.values(), key=lambda i: i.id)
    ]
    for msg in session.registration_failures():
        stderr.print(f"psym: skipped an instrument: {msg}", markup=False, soft_wrap=True)
    if as_json:
        print_json(rows)
        return
    t = table("installed tasks", ["task", "name", "items", "plugin"])
    for r in rows:
        t.add_row(
            str(r["task"]), str(r["name"]), str(r["items"]), f"{r['distribution']} {r['version']}"
        )
    stdout.print(t)
