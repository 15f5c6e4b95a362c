"""The record files of run directories: what a command that reads runs must never write onto.

``run_inputs(run_dirs)`` lists them for ``base.writing.write_output(inputs=...)`` (``psym report``,
``psym export``, ``psym analyze``, ``psym validity``, ``psym merge`` and the plugins' reports).

May import: base, records.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import load_json
from psymetrics_core.records.read import PANEL_FILES

__all__ = ["RECORD_FILES", "run_inputs"]

RECORD_FILES = (
    "results.json",
    "samples.jsonl",
    "judge.jsonl",
    "plan.jsonl",
    "shard.json",
    "batch.json",
    *PANEL_FILES,
)


def run_inputs(run_dirs: Iterable[str | Path]) -> list[Path]:
    """Every record file of each run directory (whether it exists or not), and every file the
    run's provenance lists (its population file, persona template, persona and item files); a
    path given as a file (``RUN/results.json``) stands for its folder."""
    out: list[Path] = []
    for d in run_dirs:
        p = Path(d)
        folder = p.parent if p.suffix in (".json", ".jsonl") and not p.is_dir() else p
        out += [folder / name for name in RECORD_FILES]
        if folder != p:
            out.append(p)
        out += _provenance_files(folder / "results.json")
    return out


def _provenance_files(results: Path) -> list[Path]:
    """The files ``results``' provenance says the run used (none when it cannot be read: the
    command that reads the run says why)."""
    raw: Any = None
    with contextlib.suppress(PsymError, OSError):
        raw = load_json(results, what="run record") if results.is_file() else None
    prov = raw.get("provenance") if isinstance(raw, dict) else None
    files = prov.get("files") if isinstance(prov, dict) else None
    if not isinstance(files, list):
        return []
    return [
        Path(f["path"]) for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)
    ]
