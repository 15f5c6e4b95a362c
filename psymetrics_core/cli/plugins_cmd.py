"""``psym plugins``: installed plugins, what each registers, and any that failed to load."""

from __future__ import annotations

from typing import Any

import click

from .console import print_json, stdout, table


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True)
@click.option("--all", "show_all", is_flag=True, help="Include the core's built-in plugins.")
def plugins_cmd(as_json: bool, show_all: bool) -> None:
    """List plugins with version, hooks, tasks and backends, and load failures with reasons."""
    from ..plugins import get_plugin_manager, plugin_records
    from ..registry import backends, instruments

    pm = get_plugin_manager()
    insts, bes = instruments(), backends()
    rows: list[dict[str, Any]] = []
    for rec in plugin_records():
        if rec.status == "builtin" and not show_all:
            continue
        plugin = pm.get_plugin(rec.name)
        hooks = sorted(h.name for h in pm.get_hookcallers(plugin) or []) if plugin else []
        rows.append(
            {
                "name": rec.name,
                "distribution": rec.distribution,
                "version": rec.version,
                "status": rec.status,
                "error": rec.error,
                "hooks": hooks,
                "tasks": sorted(
                    i.id for i in insts.values() if i.plugin and i.plugin.name == rec.name
                ),
                "backends": sorted(b.name for b in bes.values() if b.plugin.name == rec.name),
            }
        )
    if as_json:
        print_json(rows)
        return
    t = table("plugins", ["plugin", "distribution", "status", "registers"])
    for r in rows:
        what = ", ".join(
            [*(f"task {x}" for x in r["tasks"]), *(f"backend {x}" for x in r["backends"])]
        ) or ", ".join(r["hooks"])
        status = r["status"] if not r["error"] else f"[red]failed[/red]: {r['error']}"
        t.add_row(r["name"], f"{r['distribution']} {r['version']}", status, what)
    stdout.print(t)
