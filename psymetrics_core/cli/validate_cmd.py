"""``psym validate``: check an instrument spec and its item files."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.administer.preflight import check_parser
from psymetrics_core.base.errors import SpecError
from psymetrics_core.base.reading import load_yaml
from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import stdout
from psymetrics_core.instruments.spec import find_spec_file, load_instrument
from psymetrics_core.pluginsys.kit import placeholders


@click.command("validate")
@click.argument("path", type=click.Path(path_type=Path))
@click.pass_context
def validate_cmd(ctx: click.Context, path: Path) -> None:
    """Validate an instrument.yaml (or its folder) and its item CSVs.

    Also fails on the plugin kit's REPLACE markers left in the citation, licence, item source
    or a norm group's source: a published plugin must say where its items come from.
    """

    inst = load_instrument(path)
    check_parser(inst, session_of(ctx))
    spec_file = find_spec_file(path)
    left = placeholders(load_yaml(spec_file))
    if left:
        raise SpecError(
            spec_file,
            "still holds the plugin kit's REPLACE placeholder in "
            + ", ".join(left)
            + " (fill in the real reference, licence and sources)",
        )
    n = {form: len(items) for form, items in inst.forms.items()}
    stdout.print(
        f"ok: task '{inst.id}' ({inst.name}): "
        + ", ".join(f"{f} form {k} items" for f, k in n.items())
        + f"; scales: {', '.join(inst.scales)}"
        + (
            ""
            if inst.human_loadings is None
            else f"; human loadings: {inst.human_loadings.describe()}"
        ),
        markup=False,
    )
