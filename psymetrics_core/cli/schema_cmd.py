"""``psym schema``: the JSON Schema of a run record or of an instrument spec."""

from __future__ import annotations

import click

from psymetrics_core.cli.console import print_json
from psymetrics_core.instruments.schema import InstrumentSpec
from psymetrics_core.records import json_schema

__all__ = ["schema_cmd"]


@click.command("schema")
@click.argument("record", type=click.Choice(["results", "samples", "judge", "instrument"]))
def schema_cmd(record: str) -> None:
    """Print the JSON Schema of results.json, a samples.jsonl or judge.jsonl line, or an
    instrument.yaml spec."""
    if record == "instrument":
        print_json(InstrumentSpec.model_json_schema())
    else:
        print_json(json_schema(record))
