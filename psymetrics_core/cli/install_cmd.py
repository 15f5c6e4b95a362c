"""``psym install``: install a plugin listed in the catalogue (registry/plugins.yaml)."""

from __future__ import annotations

import click

from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.catalogue import find_entry, install, install_command


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
@click.option("--dry-run", is_flag=True, help="Print the pip command without running it.")
def install_cmd(
    name: str, index_url: str | None, extra_index_urls: tuple[str, ...], dry_run: bool
) -> None:
    """Install plugin NAME: from plugins/ in a checkout, from the package index otherwise.

    NAME is a catalogue name, distribution or task id (`psym plugins available` lists them).
    Naming an index installs from it even inside a checkout.
    """

    if dry_run:
        entry = find_entry(name)
        click.echo(" ".join(install_command(entry, None, index_url, extra_index_urls)))
        return
    cmd, status = install(name, index_url, extra_index_urls)
    if status != 0:
        raise PsymError(f"pip failed (exit {status}): {' '.join(cmd)}")
    click.echo(f"installed {name}: {' '.join(cmd[3:])}")
