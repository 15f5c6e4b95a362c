"""``psym cache export|import``: move stored responses between machines as JSON lines.

One line per response: ``{"key", "model", "mode", "response", "created"}`` where ``response``
is the cache's own encoding of the completion. Import keeps entries already present, so
importing the same file twice, or files with overlapping entries, is harmless. Import reads
through the bounded readers: a special file (``/dev/zero``, a FIFO) is refused before it is
opened, each line is capped and parsed with bounded nesting, every field typed
(``CacheLine``, unknown fields refused), so a damaged file is one line naming the file, the
line and the field, and adds nothing.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Annotated, Any, cast

from pydantic import ConfigDict, StringConstraints, ValidationError

from psymetrics_core.backends.cache import ResponseCache
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.models import Strict
from psymetrics_core.base.reading import InputError, max_bytes, parse_json, read_lines
from psymetrics_core.base.regular import require_regular_file
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


class CacheLine(Strict):
    """One line of a ``psym cache export`` file (what ``import`` accepts, nothing else)."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    key: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    model: Annotated[str, StringConstraints(max_length=1000)]
    mode: Annotated[str, StringConstraints(max_length=100)]
    response: str
    created: float


class CachedCompletion(Strict):
    """The cache's encoding of a completion (the ``response`` field, itself JSON)."""

    text: str | None
    option_logprobs: list[float | None] | None
    meta: dict[str, Any]


_CHUNK = 5000  # rows stored per transaction


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of ``path`` (gzip when it ends in .gz), a line at a time, each at
    most ``max_bytes()``; a special file is refused before it is opened."""
    require_regular_file(path, what="cache export file (psym cache export)")
    if path.suffix != ".gz":
        yield from read_lines(path, what="cache export file")
        return
    cap = max_bytes()
    try:
        with gzip.open(path, "rb") as fh:
            n = 0
            while raw := fh.readline(cap + 1):
                n += 1
                if len(raw) > cap:
                    raise InputError(f"{path}, line {n}: a line is over the {cap:,}-byte limit")
                try:
                    yield n, raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError:
                    raise InputError(f"{path}, line {n}: not UTF-8 text") from None
    except OSError as exc:  # gzip.BadGzipFile is an OSError
        raise PsymError(f"{path}: not a readable gzip file ({exc.strerror or exc})") from None
    except (EOFError, zlib.error) as exc:
        raise PsymError(f"{path}: truncated or damaged gzip file ({exc})") from None


def _row(path: Path, n: int, line: str) -> tuple[str, str, str, str, float]:
    """Line ``n``, validated: the fields of ``CacheLine`` and a ``response`` that decodes."""
    where = f"{path}, line {n}"
    try:
        d = parse_json(line, path, line=n)
    except ValueError:  # an integer of more than 4,300 digits (PsymErrors pass through)
        raise InputError(f"{where}: invalid JSON (a number too long)") from None
    if not isinstance(d, dict):
        raise PsymError(f"{where}: expected a JSON object (one cached response per line)")
    try:
        rec = CacheLine.model_validate(d)
    except ValidationError as exc:
        raise _field_error(where, exc) from None
    try:
        inner = parse_json(rec.response, path, line=n)
        CachedCompletion.model_validate(inner)
    except (PsymError, ValidationError, ValueError):
        raise PsymError(
            f"{where}, field 'response': not a cached completion (JSON with text, "
            "option_logprobs and meta)"
        ) from None
    if not math.isfinite(rec.created):
        raise PsymError(f"{where}, field 'created': expected a finite number")
    return rec.key, rec.model, rec.mode, rec.response, rec.created


def _field_error(where: str, exc: ValidationError) -> PsymError:
    err = exc.errors()[0]
    field = ".".join(str(x) for x in err["loc"]) or "(the line)"
    if err["type"] == "missing":
        msg = "missing (required)"
    elif err["type"] == "extra_forbidden":
        msg = f"not a field of a cache line (expected {', '.join(_FIELDS)})"
    elif field == "key":
        msg = "expected a SHA-256 request key (64 hex digits)"
    else:
        msg = f"{err['msg']} (got {type(err.get('input')).__name__})".replace("\n", " ")
    return PsymError(f"{where}, field '{field}': {msg}")


def import_cache(cache: ResponseCache, path: Path) -> tuple[int, int]:
    """Add the responses in ``path``; returns (lines read, new entries stored).

    The file is read twice, a line at a time: first every line is checked (so a damaged file
    adds nothing), then the rows are stored in transactions of ``_CHUNK``: memory stays
    bounded whatever the file's length.
    """
    path = Path(path)
    total = sum(1 for n, line in _lines(path) if line.strip() and _row(path, n, line))
    added = 0
    chunk: list[tuple[str, str, str, str, float]] = []
    for n, line in _lines(path):
        if line.strip():
            chunk.append(_row(path, n, line))
        if len(chunk) >= _CHUNK:
            added += cache.add_rows(chunk)
            chunk = []
    if chunk:
        added += cache.add_rows(chunk)
    return total, added
