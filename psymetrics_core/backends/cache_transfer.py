"""``psym cache export|import``: move stored responses between machines as JSON lines.

One line per response: ``{"key", "model", "mode", "response", "created"}`` where ``response``
is the cache's own encoding of the completion. Import keeps entries already present, so
importing the same file twice, or files with overlapping entries, is harmless.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import IO, cast

from psymetrics_core.backends.cache import ResponseCache, _decode
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.writing import check_target, write_output

__all__ = ["export_cache", "import_cache"]

_FIELDS = ("key", "model", "mode", "response", "created")


def _open(path: Path, mode: str, gz: bool) -> IO[str]:
    if gz:
        return cast(IO[str], gzip.open(path, mode + "t", encoding="utf-8"))
    return path.open(mode, encoding="utf-8")


def _cache_files(cache: ResponseCache) -> list[Path]:
    """The cache's database and its SQLite side files (write-ahead log, shared memory)."""
    db = Path(cache.path)
    return [db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal"))]


def export_cache(cache: ResponseCache, path: str | Path, model: str | None = None) -> int:
    """Write every response (of ``model``, a label from ``psym cache info``) to ``path``.

    Written by ``base.writing.write_output``: a regular file or a new path, never the cache's
    own database; a unique temporary file next to ``path``, then one atomic rename, so a reader
    (or `psym cache import`) sees the old file or the new one and concurrent exports never
    write into each other's temporary file.
    """
    inputs = _cache_files(cache)
    target = check_target(path, inputs=inputs, what="cache export")  # before reading the rows
    rows = cache.rows(model)

    def write(raw: IO[bytes]) -> None:
        sink = gzip.GzipFile(fileobj=raw, mode="wb") if target.suffix == ".gz" else raw
        fh = io.TextIOWrapper(cast(IO[bytes], sink), encoding="utf-8", newline="\n")
        for row in rows:
            line = json.dumps(dict(zip(_FIELDS, row, strict=True)), ensure_ascii=False)
            fh.write(line + "\n")
        fh.flush()
        fh.detach()  # leaves ``raw`` open for the writer's fsync
        if sink is not raw:
            sink.close()  # the gzip trailer, into ``raw``

    write_output(path, write, inputs=inputs, what="cache export")
    return len(rows)


def import_cache(cache: ResponseCache, path: Path) -> tuple[int, int]:
    """Add the responses in ``path``; returns (lines read, new entries stored)."""
    rows: list[tuple[str, str, str, str, float]] = []
    try:
        with _open(path, "r", path.suffix == ".gz") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    d = json.loads(line)
                    row = (str(d["key"]), str(d["model"]), str(d["mode"]), str(d["response"]),
                           float(d["created"]))  # fmt: skip
                    _decode(row[3])
                except json.JSONDecodeError as exc:
                    raise PsymError(f"{path}:{n}: not JSON ({exc.msg})") from None
                except KeyError as exc:
                    raise PsymError(f"{path}:{n}: missing field {exc.args[0]!r}") from None
                except (TypeError, ValueError, AttributeError):
                    raise PsymError(
                        f"{path}:{n}: expected key, model, mode, response (a cached "
                        "completion) and created (a number)"
                    ) from None
                if len(row[0]) != 64:
                    raise PsymError(f"{path}:{n}: field 'key' is not a SHA-256 request key")
                rows.append(row)
    except OSError as exc:
        raise PsymError(f"{path}: {exc.strerror or exc}") from None
    except (EOFError, gzip.BadGzipFile) as exc:
        raise PsymError(f"{path}: {exc}") from None
    return len(rows), cache.add_rows(rows)
