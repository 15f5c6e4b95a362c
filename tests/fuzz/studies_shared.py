"""What the studies fuzz suites share (test_fuzz_studies.py, test_fuzz_merge.py,
test_fuzz_cache_import.py, test_fuzz_batch.py): hostile JSON texts, the fake API key, special
files (private FIFOs, directories and symlinks in ``tmp_path``; no real device node is opened)
and an in-place JSON edit of a file in a run directory."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEEP_ARRAY = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
BIG_INT = "9" * 5000
KEY = "sk-FUZZSECRET0123456789"


def unblock(fifo: Path, seconds: float = 30.0) -> None:
    """Open ``fifo`` for writing once a reader has opened it, then close it (the reader sees an
    end of file): a reader that wrongly opens the FIFO fails its case instead of hanging."""

    def run() -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet (ENXIO), or the FIFO is gone
                time.sleep(0.1)
                continue
            os.close(fd)
            return

    threading.Thread(target=run, daemon=True).start()


def _fifo(tmp_path: Path) -> Path:
    p = tmp_path / "fifo"
    os.mkfifo(p)
    unblock(p)
    return p


def _proc_link(tmp_path: Path) -> Path:
    p = tmp_path / "environ.jsonl"
    p.symlink_to("/proc/self/environ")  # only stat()ed: the reader refuses it unopened
    return p


def _directory(tmp_path: Path) -> Path:
    p = tmp_path / "dir.jsonl"
    p.mkdir()
    return p


def _fifo_link(tmp_path: Path) -> Path:
    target = _fifo(tmp_path)
    p = tmp_path / "link.jsonl"
    p.symlink_to(target)
    return p


def _over_cap(tmp_path: Path) -> Path:
    """A unit line with an extra 50 MB field: over the input size cap, refused unread."""
    p = tmp_path / "big.jsonl"
    with p.open("wb") as fh:
        fh.write(b'{"psym_plan": 1}\n{"index": 0, "pad": "')
        fh.write(b"x" * 50_000_000)
        fh.write(b'"}\n')
    return p


SPECIAL: list[tuple[str, Callable[[Path], Path], str]] = [
    ("fifo", _fifo, "FIFO"),
    ("symlink-to-fifo", _fifo_link, "FIFO"),
    ("directory", _directory, "directory"),
    ("symlink-to-procfs", _proc_link, "procfs"),
    ("missing", lambda t: t / "nowhere.jsonl", "no such file"),
    ("over-size-cap-50mb-field", _over_cap, "limit"),
]


def json_edit(fname: str, edit: Callable[[Any], Any]) -> Callable[[Path], None]:
    def apply(d: Path) -> None:
        data = json.loads((d / fname).read_text())
        edit(data)
        (d / fname).write_text(json.dumps(data))

    return apply
