"""What verifies a run's record files: their line counts and sha256, kept in ``results.json``.

A run writes ``samples.jsonl`` (and ``judge.jsonl`` when a judge was called) line by line, then
``results.json`` last; ``record_digests`` gives the ``records`` field ``results.json`` keeps of
them (``{"samples.jsonl": {"lines": N, "sha256": HEX}, ...}``) and ``verify_records`` checks a
run directory's files against it. ``psym merge`` verifies every shard this way, so a shard
whose records were altered after the run (one answer changed, a line added, removed or
reordered) is refused in one line naming the shard, the file and what differs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.regular import require_regular_file

__all__ = ["RECORD_FILES", "file_digest", "text_digest", "record_digests", "verify_records"]

RECORD_FILES = ("samples.jsonl", "judge.jsonl")
_CHUNK = 1 << 20


def text_digest(text: str) -> dict[str, Any]:
    """The ``records`` entry of a record file whose whole content is ``text``."""
    blob = text.encode("utf-8")
    return {"lines": blob.count(b"\n"), "sha256": hashlib.sha256(blob).hexdigest()}


def file_digest(path: Path) -> dict[str, Any]:
    """The ``records`` entry of the record file at ``path`` (read in 1 MiB chunks)."""
    h = hashlib.sha256()
    lines = 0
    try:
        with Path(path).open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
                lines += chunk.count(b"\n")
    except OSError as exc:
        raise PsymError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return {"lines": lines, "sha256": h.hexdigest()}


def record_digests(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The ``records`` field of ``run_dir``'s ``results.json``: each record file there."""
    return {
        name: file_digest(run_dir / name) for name in RECORD_FILES if (run_dir / name).is_file()
    }


def verify_records(run_dir: Path, claimed: dict[str, Any] | None, *, what: str = "run") -> None:
    """``run_dir``'s record files are those its ``results.json`` field ``records`` describes:
    one line naming the directory, the file and the difference otherwise. A run without the
    field (written before psymetrics recorded it, or with the field removed) is refused too:
    its records cannot be verified."""
    results = Path(run_dir) / "results.json"
    if claimed is None:
        raise PsymError(
            f"{results}: no field 'records' (the line counts and sha256 of the {what}'s "
            f"samples.jsonl), so its records cannot be verified; run the {what} again"
        )
    for name in RECORD_FILES:
        path = Path(run_dir) / name
        entry = claimed.get(name)
        if entry is None:
            if path.is_file() and path.stat().st_size:
                raise PsymError(
                    f"{path}: not in {results} field 'records' (a file added after the run)"
                )
            continue
        require_regular_file(path, what=f"{what} record file")
        got = file_digest(path)
        if got["lines"] != entry["lines"]:
            raise PsymError(
                f"{path}: {got['lines']} line(s), but {results} field 'records.{name}.lines' "
                f"records {entry['lines']}: the {what}'s records were altered after the run"
            )
        if got["sha256"] != entry["sha256"]:
            raise PsymError(
                f"{path}: its sha256 differs from {results} field 'records.{name}.sha256': the "
                f"{what}'s records were altered after the run"
            )
