"""Run records: ``results.json`` (scores, provenance) and ``samples.jsonl`` (one line per item).

Every record is validated against its typed model (``psymetrics_core.records``) before it is
written, so a record that drifts from the published schema fails where it is made. The writers
name the record (``"samples"``, ``"results"``, ``"judge"``) or pass a pydantic model.
"""

from __future__ import annotations

import json
import math
import platform
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ValidationError

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.redaction import redact
from psymetrics_core.base.versions import RECORD_SCHEMA_VERSION, __version__
from psymetrics_core.base.writing import atomic_write, check_target
from psymetrics_core.records import record_model

__all__ = ["SampleWriter", "write_results", "provenance", "redact", "checked", "RecordError"]


def provenance(plugins: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Versions of psymetrics, of ``plugins`` (name -> distribution, version, status: what
    ``pluginsys.loader.plugin_versions`` makes of a session's load records), Python and the
    platform."""
    return {
        "psymetrics": __version__,
        "plugins": {name: dict(info) for name, info in plugins.items()},
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


class RecordError(PsymError):
    """A run record does not match its schema (a bug in the code that built it)."""


def checked(record: dict[str, Any], model: str | type[BaseModel], what: str) -> dict[str, Any]:
    """``record`` with ``schema_version``, validated against ``model`` (RecordError if not):
    a run record's name (results, samples, judge: ``records.record_model``) or a pydantic
    model."""
    cls = record_model(model) if isinstance(model, str) else model
    full = {"schema_version": RECORD_SCHEMA_VERSION, **record}
    try:
        obj = cls.model_validate(full)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise RecordError(
            f"{what} record does not match the schema (`psym schema`): field '{where}': "
            f"{err['msg']} ({len(exc.errors())} error(s))"
        ) from None
    out: dict[str, Any] = obj.model_dump(mode="json", exclude_unset=True)
    return out


class SampleWriter:
    """Appends one JSON line per answered item and flushes it at once (nothing paid is lost).

    Each line is validated against ``model`` first (see :func:`checked`): by default the
    ``samples`` record (a ``psym eval`` sample); ``model=None`` writes lines unchecked (a
    plugin's own records).
    """

    def __init__(self, path: Path | None, model: str | type[BaseModel] | None = "samples") -> None:
        self.path = path
        self.model = model
        self._fh: IO[str] | None = None
        if path is not None:
            check_target(path, what="samples file", make_parents=True)  # no FIFO, no device
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = path.open("w", encoding="utf-8")
            except OSError as exc:
                raise PsymError(f"{path}: cannot write samples ({exc.strerror or exc})") from None

    def write(self, record: dict[str, Any]) -> None:
        """Validate and write one line."""
        name = self.path.name if self.path is not None else "samples.jsonl"
        line = checked(record, self.model, name) if self.model is not None else record
        if self._fh is not None:
            try:
                self._fh.write(json.dumps(line, ensure_ascii=False) + "\n")
                self._fh.flush()
            except OSError as exc:
                raise PsymError(
                    f"{self.path}: cannot write samples ({exc.strerror or exc})"
                ) from None

    def close(self) -> None:
        """Close the file."""
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                pass  # already reported by write()
            self._fh = None


def write_results(path: Path, results: dict[str, Any], validate: bool = True) -> None:
    """Validate ``results`` (the ``results`` record; ``validate=False`` for a plugin's own
    report) and write it atomically: a complete file or none, always valid JSON.

    A non-finite number (NaN, Infinity: not JSON) is written as ``null``.
    """
    record = _finite(results)
    if validate:
        record = checked(record, "results", path.name)
    text = json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    check_target(path, what="results file", make_parents=True)  # a regular file or a new path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    except OSError as exc:
        raise PsymError(f"{path}: cannot write results ({exc.strerror or exc})") from None


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by None (JSON has no such numbers)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
