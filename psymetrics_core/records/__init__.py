"""Typed run records: ``results.json``, each ``samples.jsonl`` line and each ``judge.jsonl`` line.

Every record carries ``schema_version`` (``RECORD_SCHEMA_VERSION``). The writers in
``psymetrics_core.results`` validate each record against these models before writing, so a
change of shape fails loudly where it is made; ``psym schema results|samples|judge|instrument``
prints the JSON Schema of each.
"""

from __future__ import annotations

from typing import Any

from .results import RECORD_SCHEMA_VERSION, ResultsRecord, RunSummary, ScaleEntry, TaskEntry
from .samples import ItemMeta, JudgeRecord, PromptRecord, SampleRecord

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
    "json_schema",
]

SCHEMAS = ("results", "samples", "judge", "instrument")


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one record kind: results, samples, judge or instrument."""
    from ..errors import PsymError

    if name == "results":
        return ResultsRecord.model_json_schema()
    if name == "samples":
        return SampleRecord.model_json_schema()
    if name == "judge":
        return JudgeRecord.model_json_schema()
    if name == "instrument":
        from .instrument import InstrumentSpec

        return InstrumentSpec.model_json_schema()
    raise PsymError(f"unknown record {name!r} (expected one of: {', '.join(SCHEMAS)})")
