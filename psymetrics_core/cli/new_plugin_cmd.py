"""``psym new-plugin``: scaffold a data-only instrument plugin."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.cli.console import stdout
from psymetrics_core.pluginsys.kit import new_plugin


@click.command("new-plugin")
@click.argument("name")
@click.option(
    "--directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where to create the psymetrics-plugin-NAME folder.",
)
def new_plugin_cmd(name: str, directory: Path) -> None:
    """Write an installable, tested plugin for task NAME (pyproject.toml, instrument YAML + CSV)."""

    root = new_plugin(name, directory)
    stdout.print(f"created {root}", markup=False)
    stdout.print(
        f"next: edit {root.name}/*/instruments/{name}/ (instrument.yaml, items.csv), then\n"
        f"  pip install -e {root}\n  psym validate {root}/{root.name.replace('-', '_')}"
        f"/instruments/{name}\n  pytest {root}/tests\n"
        f"publish (python -m build, twine upload): see {root}/README.md",
        markup=False,
    )
