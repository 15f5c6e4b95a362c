"""The record files of run directories: what a command that reads runs must never write onto.

``run_inputs(run_dirs)`` lists them for ``base.writing.write_output(inputs=...)`` (``psym report``,
``psym export``, ``psym analyze``, ``psym validity``, ``psym merge`` and the plugins' reports).

May import: base, records.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

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
    """Every record file of each run directory (whether it exists or not); a path given as a
    file (``RUN/results.json``) stands for its folder."""
    out: list[Path] = []
    for d in run_dirs:
        p = Path(d)
        folder = p.parent if p.suffix in (".json", ".jsonl") and not p.is_dir() else p
        out += [folder / name for name in RECORD_FILES]
        if folder != p:
            out.append(p)
    return out
