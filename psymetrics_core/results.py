"""Run records: ``results.json`` (scores, provenance) and ``samples.jsonl`` (one line per item).

Every record is validated against its typed model (``psymetrics_core.records``) before it is
written, so a record that drifts from the published schema fails where it is made.
"""

from __future__ import annotations

import json
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ValidationError

from .errors import PsymError

__all__ = ["SampleWriter", "write_results", "provenance", "redact", "checked", "RecordError"]

_SECRET_WORDS = ("key", "token", "secret", "password", "authorization")


def redact(args: dict[str, Any]) -> dict[str, Any]:
    """Copy of ``args`` with values of secret-looking keys replaced (``api_key_env`` is a name)."""
    out: dict[str, Any] = {}
    for k, v in args.items():
        secret = any(w in k.lower() for w in _SECRET_WORDS) and not k.lower().endswith("_env")
        out[k] = "***" if secret else v
    return out


def provenance() -> dict[str, Any]:
    """Versions of psymetrics, every plugin, Python and the platform."""
    from . import __version__
    from .plugins import plugin_records

    return {
        "psymetrics": __version__,
        "plugins": {
            r.name: {"distribution": r.distribution, "version": r.version, "status": r.status}
            for r in plugin_records()
            if r.status != "builtin"
        },
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


class RecordError(PsymError):
    """A run record does not match its schema (a bug in the code that built it)."""


def checked(record: dict[str, Any], model: type[BaseModel], what: str) -> dict[str, Any]:
    """``record`` with ``schema_version``, validated against ``model`` (RecordError if not)."""
    from .records import RECORD_SCHEMA_VERSION

    full = {"schema_version": RECORD_SCHEMA_VERSION, **record}
    try:
        obj = model.model_validate(full)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise RecordError(
            f"{what} record does not match the schema (`psym schema`): field '{where}': "
            f"{err['msg']} ({len(exc.errors())} error(s))"
        ) from None
    return obj.model_dump(mode="json", exclude_unset=True)


class SampleWriter:
    """Appends one JSON line per answered item and flushes it at once (nothing paid is lost).

    Each line is validated against ``model`` (default: ``records.SampleRecord``) first.
    """

    def __init__(self, path: Path | None, model: type[BaseModel] | None = None) -> None:
        from .records import SampleRecord

        self.path = path
        self.model: type[BaseModel] = model or SampleRecord
        self._fh: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = path.open("w", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        """Validate and write one line."""
        name = self.path.name if self.path is not None else "samples.jsonl"
        line = checked(record, self.model, name)
        if self._fh is not None:
            self._fh.write(json.dumps(line, ensure_ascii=False) + "\n")
            self._fh.flush()

    def close(self) -> None:
        """Close the file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def write_results(path: Path, results: dict[str, Any]) -> None:
    """Validate ``results`` (``records.ResultsRecord``) and write ``results.json`` atomically."""
    from .records import ResultsRecord

    record = checked(results, ResultsRecord, "results.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
