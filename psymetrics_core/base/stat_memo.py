"""Small JSON memos in the cache directory for values derived from files.

An entry is keyed by the file's resolved path and holds the file's *stamp* (size, modification
time, inode): it is used only while the file still has that stamp, so an edited or replaced
file is read again. A missing, unreadable or malformed memo is an empty one; a memo that cannot
be written only costs the work again next time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from psymetrics_core.base.paths import cache_dir

__all__ = ["stamp", "read_memo", "write_memo", "store_quietly"]


def stamp(path: Path) -> list[int]:
    """The size, modification time (ns) and inode of ``path`` (raises OSError when missing)."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _memo_path(name: str) -> Path:

    return cache_dir() / name


def read_memo(name: str) -> dict[str, Any]:
    """The memo ``name`` of the cache directory as a dict (empty when absent or malformed)."""
    try:
        data = json.loads(_memo_path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def write_memo(name: str, memo: dict[str, Any]) -> None:
    """Atomically replace the memo ``name``; a failure is ignored."""
    store_quietly(_memo_path(name), json.dumps(memo, sort_keys=True).encode("utf-8"))


def store_quietly(path: Path, data: bytes) -> None:
    """Atomically replace ``path`` (a file of the cache directory that can be derived again)
    with ``data``; a failure (read-only or full cache) is ignored."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        pass
