"""``psym plugins``: installed plugins, what each registers, and any that failed to load."""

from __future__ import annotations

from importlib import metadata
from typing import Any

import click
from rich.markup import escape

from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import print_json, stdout, table
from psymetrics_core.pluginsys.catalogue import catalogue


@click.group("plugins", invoke_without_command=True)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the plugins as JSON instead of a table."
)
@click.option("--all", "show_all", is_flag=True, help="Include the core's built-in plugins.")
@click.option(
    "--backends",
    "show_backends",
    is_flag=True,
    help="List the model backends (--model) with every --model-args key they accept.",
)
@click.pass_context
def plugins_cmd(ctx: click.Context, as_json: bool, show_all: bool, show_backends: bool) -> None:
    """List plugins with version, hooks, tasks and backends, and load failures with reasons.

    `psym plugins available` lists the catalogue of known plugins, installed or not;
    `psym plugins --backends` the backends and their --model-args keys.
    """
    if ctx.invoked_subcommand is not None:
        return
    session = session_of(ctx)
    if show_backends:
        _print_backends(session.backends(), as_json)
        return
    pm = session.pm
    insts, bes, conds = session.instruments(), session.backends(), session.conditions()
    for msg in session.registration_failures():  # one line each; the table lists everything
        click.echo(f"psym: skipped an instrument: {msg}", err=True)
    rows: list[dict[str, Any]] = []
    for rec in session.records:
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
                "conditions": sorted(c.name for c in conds.values() if c.plugin == rec.name),
            }
        )
    if as_json:
        print_json(rows)
        return
    t = table("plugins", ["plugin", "distribution", "status", "registers"])
    for r in rows:
        what = ", ".join(
            [
                *(f"task {x}" for x in r["tasks"]),
                *(f"backend {x}" for x in r["backends"]),
                *(f"condition {x}" for x in r["conditions"]),
            ]
        ) or ", ".join(r["hooks"])
        status = r["status"] if not r["error"] else f"[red]failed[/red]: {r['error']}"
        t.add_row(r["name"], f"{r['distribution']} {r['version']}", status, what)
    stdout.print(t)


def _print_backends(backends: dict[str, Any], as_json: bool) -> None:
    """Each backend: its plugin, what it runs and its --model-args keys with their help."""
    rows = [
        {
            "backend": b.name,
            "plugin": b.plugin.name,
            "description": b.description,
            "model_args": dict(b.args),
        }
        for b in sorted(backends.values(), key=lambda b: b.name)
    ]
    if as_json:
        print_json(rows)
        return
    t = table("backends (--model NAME --model-args KEY=VALUE,...)", ["--model", "--model-args"])
    for r in rows:
        keys = "\n".join(
            f"[bold]{escape(k)}[/bold]: {escape(v)}" for k, v in r["model_args"].items()
        )
        t.add_row(
            f"{r['backend']}\n[dim]{escape(r['description'])}[/dim]", keys or "[dim]none[/dim]"
        )
    stdout.print(t)


@plugins_cmd.command("available")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the catalogue as JSON instead of a table."
)
def available_cmd(as_json: bool) -> None:
    """Every plugin in the catalogue (registry/plugins.yaml), installed or not."""

    rows: list[dict[str, Any]] = []
    for e in catalogue():
        try:
            version: str | None = metadata.version(e.distribution)
        except metadata.PackageNotFoundError:
            version = None
        rows.append(
            {
                "name": e.name,
                "distribution": e.distribution,
                "tasks": list(e.tasks),
                "licence": e.licence,
                "citation": e.citation,
                "installed": version,
            }
        )
    if as_json:
        print_json(rows)
        return
    t = table("available plugins (psym install NAME)", ["plugin", "tasks", "installed", "licence"])
    for r in rows:
        t.add_row(
            f"{r['name']}\n[dim]{r['distribution']}[/dim]",
            ", ".join(r["tasks"]),
            r["installed"] or "no",
            r["licence"],
        )
    stdout.print(t)
