"""Run directories: the typed records, the one writer and reader, run-dir claims, provenance.

The records are ``results.json``, each ``samples.jsonl`` line and each ``judge.jsonl`` line;
``writer`` writes them, ``read`` reads them back, ``rundir`` claims a run directory and
``provenance`` describes the run. Nothing here calls a model.

May import: base.

Every record carries ``schema_version`` (``RECORD_SCHEMA_VERSION``). The writers in
``psymetrics_core.records.writer`` validate each record against these models before writing, so a
change of shape fails loudly where it is made; ``psym schema results|samples|judge|instrument``
prints the JSON Schema of each.

The models are imported on first use (``psymetrics_core.records.SampleRecord`` imports
pydantic then): the writers of ``psym eval`` validate through ``core_check``, which needs only
pydantic-core, so a command that writes records does not pay for pydantic's import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from psymetrics_core.base.versions import RECORD_SCHEMA_VERSION

if TYPE_CHECKING:
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

# run record name (as in ``psym schema``) -> (module of this package, model)
RECORD_MODELS = {
    "results": ("results", "ResultsRecord"),
    "samples": ("samples", "SampleRecord"),
    "judge": ("samples", "JudgeRecord"),
}

_MODELS = {
    "ResultsRecord": "results",
    "TaskEntry": "results",
    "RunSummary": "results",
    "ScaleEntry": "results",
    "SampleRecord": "samples",
    "JudgeRecord": "samples",
    "PromptRecord": "samples",
    "ItemMeta": "samples",
}


def __getattr__(name: str) -> Any:
    """The record models, imported when first asked for (PEP 562)."""
    if name in _MODELS:
        return getattr(importlib.import_module(f"{__name__}.{_MODELS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def record_model(name: str) -> Any:
    """The pydantic model of the run record ``name`` (results, samples or judge)."""
    module, model = RECORD_MODELS[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), model)


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one record kind: results, samples, judge or instrument."""
    from psymetrics_core.base.errors import PsymError

    if name in RECORD_MODELS:
        schema: dict[str, Any] = record_model(name).model_json_schema()
        return schema
    if name == "instrument":
        from psymetrics_core.instruments.schema import InstrumentSpec

        return InstrumentSpec.model_json_schema()
    raise PsymError(f"unknown record {name!r} (expected one of: {', '.join(SCHEMAS)})")
