"""``psym install``: install a plugin listed in the catalogue (registry/plugins.yaml)."""

from __future__ import annotations

import click

from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.catalogue import (
    find_entry,
    install,
    install_command,
    install_failure,
)


@click.command("install")
@click.argument("name")
@click.option(
    "--index-url",
    metavar="URL",
    help="Package index to install from (pip's --index-url); default: pip's configured index.",
)
@click.option(
    "--extra-index-url",
    "extra_index_urls",
    metavar="URL",
    multiple=True,
    help="Further index for the dependencies (pip's --extra-index-url); repeatable.",
)
@click.option(
    "--find-links",
    "find_links",
    metavar="DIR",
    multiple=True,
    help="Folder of built wheels (a checkout's dist/, from make dist); pip's --find-links.",
)
@click.option("--dry-run", is_flag=True, help="Print the pip command without running it.")
def install_cmd(
    name: str,
    index_url: str | None,
    extra_index_urls: tuple[str, ...],
    find_links: tuple[str, ...],
    dry_run: bool,
) -> None:
    """Install plugin NAME: from plugins/ in a checkout, from the package index otherwise.

    NAME is a catalogue name, distribution or task id (`psym plugins available` lists them).
    Naming an index or --find-links installs from them even inside a checkout. psymetrics is
    not on the public package index yet: outside a checkout, install from the wheels a
    checkout builds (make dist) with --find-links DIST.
    """

    if dry_run:
        entry = find_entry(name)
        cmd = install_command(entry, None, index_url, extra_index_urls, find_links)
        click.echo(" ".join(cmd))
        return
    cmd, status = install(name, index_url, extra_index_urls, find_links)
    if status != 0:
        raise PsymError(install_failure(name, cmd, status))
    click.echo(f"installed {name}: {' '.join(cmd[3:])}")
