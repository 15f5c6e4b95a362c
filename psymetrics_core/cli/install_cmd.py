"""``psym install``: install a plugin listed in the catalogue (registry/plugins.yaml)."""

from __future__ import annotations

import click

from ..errors import PsymError


@click.command("install")
@click.argument("name")
@click.option("--dry-run", is_flag=True, help="Print the pip command without running it.")
def install_cmd(name: str, dry_run: bool) -> None:
    """Install plugin NAME (from plugins/ in a checkout, from the package index otherwise)."""
    from ..catalogue import find_entry, install, install_command

    if dry_run:
        click.echo(" ".join(install_command(find_entry(name))))
        return
    cmd, status = install(name)
    if status != 0:
        raise PsymError(f"pip failed (exit {status}): {' '.join(cmd)}")
    click.echo(f"installed {name}: {' '.join(cmd[3:])}")
