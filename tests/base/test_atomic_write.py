"""The one atomic write (``base.writing.atomic_write``) and its quiet form for caches
(``store_quietly``), as the public API hands them to plugins."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from psymetrics_core.api import atomic_write, store_quietly
from psymetrics_core.base.writing import NEW_FILE_MODE, NoTemporaryFile


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_atomic_write_replaces_the_file_and_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "table.csv"
    atomic_write(target, "a,b\n")
    assert target.read_text(encoding="utf-8") == "a,b\n"
    assert stat.S_IMODE(target.stat().st_mode) == NEW_FILE_MODE
    os.chmod(target, 0o600)
    atomic_write(target, b"\x00\x01")  # bytes as they are
    assert target.read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    atomic_write(target, lambda fh: fh.write("é".encode()))  # a callback given the file
    assert target.read_text(encoding="utf-8") == "é"
    assert _leftovers(tmp_path) == []


def test_atomic_write_leaves_the_old_file_and_no_temporary_file_on_failure(
    tmp_path: Path,
) -> None:
    target = tmp_path / "table.csv"
    target.write_text("old", encoding="utf-8")

    def fail(_fh: object) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, fail)
    assert target.read_text(encoding="utf-8") == "old"
    assert _leftovers(tmp_path) == []
    with pytest.raises(NoTemporaryFile):  # no folder to put the temporary file in
        atomic_write(tmp_path / "missing" / "x.csv", "x")


def test_store_quietly_makes_folders_and_ignores_a_cache_it_cannot_write(tmp_path: Path) -> None:
    memo = tmp_path / "cache" / "sub" / "memo.json"
    store_quietly(memo, '{"a": 1}')
    assert memo.read_text(encoding="utf-8") == '{"a": 1}'
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    store_quietly(blocker / "graph.onnx", b"blob")  # no error: built again next time
    assert blocker.is_file() and blocker.read_text(encoding="utf-8") == ""
    with pytest.raises(OSError):  # what it swallows: atomic_write alone raises
        atomic_write(blocker / "graph.onnx", b"blob")
