"""``psym validate``: check an instrument spec and its item files."""

from __future__ import annotations

from pathlib import Path

import click

from .console import stdout


@click.command("validate")
@click.argument("path", type=click.Path(path_type=Path))
def validate_cmd(path: Path) -> None:
    """Validate an instrument.yaml (or its folder) and its item CSVs."""
    from ..preflight import check_parser, check_placeholders
    from ..spec import load_instrument

    inst = load_instrument(path)
    check_parser(inst)
    check_placeholders(inst)
    n = {form: len(items) for form, items in inst.forms.items()}
    stdout.print(
        f"ok: task '{inst.id}' ({inst.name}): "
        + ", ".join(f"{f} form {k} items" for f, k in n.items())
        + f"; scales: {', '.join(inst.scales)}",
        markup=False,
    )
