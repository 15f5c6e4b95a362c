"""Run directories: the typed records, the one writer and reader, run-dir claims, provenance.

The records are ``results.json``, each ``samples.jsonl`` line and each ``judge.jsonl`` line;
``writer`` writes them, ``read`` reads them back, ``rundir`` claims a run directory and
``provenance`` describes the run. Nothing here calls a model.

May import: base.

Every record carries ``schema_version`` (``RECORD_SCHEMA_VERSION``). The writers in
``psymetrics_core.records.writer`` validate each record against these models before writing, so a
change of shape fails loudly where it is made; ``psym schema results|samples|judge|instrument``
prints the JSON Schema of each.
"""

from __future__ import annotations

from typing import Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.versions import RECORD_SCHEMA_VERSION
from psymetrics_core.records.results import ResultsRecord, RunSummary, ScaleEntry, TaskEntry
from psymetrics_core.records.samples import ItemMeta, JudgeRecord, PromptRecord, SampleRecord

__all__ = [
    "RECORD_SCHEMA_VERSION",
    "ResultsRecord",
    "TaskEntry",
    "RunSummary",
    "ScaleEntry",
    "SampleRecord",
    "JudgeRecord",
    "PromptRecord",
    "ItemMeta",
    "SCHEMAS",
    "RECORD_MODELS",
    "record_model",
    "json_schema",
]

SCHEMAS = ("results", "samples", "judge", "instrument")

# run record name (as in ``psym schema``) -> its model
RECORD_MODELS: dict[str, Any] = {
    "results": ResultsRecord,
    "samples": SampleRecord,
    "judge": JudgeRecord,
}


def record_model(name: str) -> Any:
    """The pydantic model of the run record ``name`` (results, samples or judge)."""
    return RECORD_MODELS[name]


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one record kind: results, samples, judge or instrument."""
    if name in RECORD_MODELS:
        schema: dict[str, Any] = record_model(name).model_json_schema()
        return schema
    raise PsymError(f"unknown record {name!r} (expected one of: {', '.join(SCHEMAS)})")
