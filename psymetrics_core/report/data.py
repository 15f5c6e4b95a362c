"""Read what a report shows from run directories: results, samples, judge calls, panels.

A run directory holds ``results.json`` and ``samples.jsonl`` (``psym eval --output``), and
optionally ``judge.jsonl`` and the JSON results of panels written by other commands:
``contamination.json`` (``psym contamination --output DIR``) and ``projective.json``
(``psym projective-analyze RUN_DIR --json RUN_DIR/projective.json``). A directory with only a
panel file is read as a run without tasks. Nothing here calls a model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PsymError

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


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise PsymError(f"{path}: not valid JSON ({exc})") from None
    except OSError as exc:
        raise PsymError(f"{path}: cannot read ({exc.strerror})") from None


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if not path.is_file():
        return rows
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise PsymError(f"{path}, line {n}: not valid JSON ({exc})") from None
            if not isinstance(row, dict):
                raise PsymError(f"{path}, line {n}: expected a JSON object")
            rows.append(row)
    return rows


def load_run_data(path: str | Path, label: str | None = None) -> RunData:
    """One run directory; a missing or malformed ``results.json`` is a one-line error."""
    p = Path(path)
    res_path = p / "results.json"
    panels = {name: _json(p / name) for name in PANEL_FILES if (p / name).is_file()}
    if res_path.is_file():
        results = _json(res_path)
        if not isinstance(results, dict) or not isinstance(results.get("tasks"), dict):
            raise PsymError(f"{res_path}: not a psym results file (expected a 'tasks' mapping)")
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
        samples=_jsonl(p / "samples.jsonl"),
        judge=_jsonl(p / "judge.jsonl"),
        panels=panels,
    )
