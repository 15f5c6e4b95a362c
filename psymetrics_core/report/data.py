"""Read what a report shows from run directories: results, samples, judge calls, panels.

A run directory holds ``results.json`` and ``samples.jsonl`` (``psym eval --output``), and
optionally ``judge.jsonl`` and the JSON results of panels written by other commands:
``contamination.json`` (``psym contamination --output DIR``) and ``projective.json``
(``psym projective-analyze RUN_DIR --json RUN_DIR/projective.json``). A directory with only a
panel file is read as a run without tasks. Nothing here calls a model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import load_json
from psymetrics_core.records import JudgeRecord, SampleRecord
from psymetrics_core.records.read import iter_records, read_results

__all__ = ["RunData", "load_run_data", "PANEL_FILES"]

# optional panels: file name in the run directory -> section title
PANEL_FILES = {
    "contamination.json": "Contamination",
    "projective.json": "Projective tests",
}


@dataclass
class RunData:
    """One run directory as the report reads it."""

    label: str
    path: Path
    results: dict[str, Any]
    samples: list[dict[str, Any]]
    judge: list[dict[str, Any]] = field(default_factory=list)
    panels: dict[str, Any] = field(default_factory=dict)  # file name -> parsed JSON

    @property
    def tasks(self) -> dict[str, dict[str, Any]]:
        """``results.json``'s ``tasks`` mapping."""
        return dict(self.results.get("tasks") or {})

    @property
    def mode(self) -> str:
        """``generate`` or ``logprob``."""
        return str((self.results.get("settings") or {}).get("mode", "generate"))


def _jsonl(path: Path, model: type[BaseModel], schema: str) -> list[dict[str, Any]]:
    """The objects of a JSONL run file, each validated against its record (none if absent)."""
    if not path.is_file():
        return []
    return [row for _, row, _ in iter_records(path, model, what=f"{schema} file", schema=schema)]


def load_run_data(path: str | Path, label: str | None = None) -> RunData:
    """One run directory, read by the run reader of ``psymetrics_core.records.read``: a missing
    or malformed ``results.json``, ``samples.jsonl`` or ``judge.jsonl`` (not JSON, not UTF-8, a
    field of the wrong type or missing) is a one-line error naming the file, line and field."""
    p = Path(path)
    res_path = p / "results.json"
    panels = {
        name: load_json(p / name, what="panel file") for name in PANEL_FILES if (p / name).is_file()
    }
    if res_path.is_file():
        results = read_results(res_path, schema=True)
    elif panels:  # e.g. a `psym contamination --output DIR` directory: panels only
        results = {"tasks": {}}
    else:
        raise PsymError(
            f"{res_path}: no such file (is {p} a `psym eval --output` directory? "
            f"a directory with only {' or '.join(PANEL_FILES)} is read too)"
        )
    name = label or results.get("label") or p.resolve().name
    return RunData(
        label=str(name),
        path=p,
        results=results,
        samples=_jsonl(p / "samples.jsonl", SampleRecord, "samples"),
        judge=_jsonl(p / "judge.jsonl", JudgeRecord, "judge"),
        panels=panels,
    )
