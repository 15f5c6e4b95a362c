"""Run records: ``results.json`` (scores, provenance) and ``samples.jsonl`` (one line per item).

Every record is validated against its typed model (``psymetrics_core.records``) before it is
written, so a record that drifts from the published schema fails where it is made. The writers
name the record (``"samples"``, ``"results"``, ``"judge"``) and validate it through
``records.core_check``, without importing pydantic.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.versions import RECORD_SCHEMA_VERSION

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["SampleWriter", "write_results", "provenance", "redact", "checked", "RecordError"]

_SECRET_WORDS = ("key", "token", "secret", "password", "authorization")


def redact(args: dict[str, Any]) -> dict[str, Any]:
    """Copy of ``args`` with values of secret-looking keys replaced (``api_key_env`` is a name).

    Credentials inside URL values (``user:key@`` or a ``?api_key=`` query) are masked too.
    """
    from psymetrics_core.base.redaction import redact_url

    out: dict[str, Any] = {}
    for k, v in args.items():
        secret = any(w in k.lower() for w in _SECRET_WORDS) and not k.lower().endswith("_env")
        if secret:
            out[k] = "***"
        elif isinstance(v, str) and "://" in v:
            out[k] = redact_url(v)
        else:
            out[k] = v
    return out


def provenance(plugins: Iterable[Any]) -> dict[str, Any]:
    """Versions of psymetrics, every plugin, Python and the platform.

    ``plugins`` are the load records of a session (``Session.records``: each with ``name``,
    ``distribution``, ``version`` and ``status``); the core's built-in ones are left out.
    """
    from psymetrics_core import __version__

    return {
        "psymetrics": __version__,
        "plugins": {
            r.name: {"distribution": r.distribution, "version": r.version, "status": r.status}
            for r in plugins
            if r.status != "builtin"
        },
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


class RecordError(PsymError):
    """A run record does not match its schema (a bug in the code that built it)."""


def checked(record: dict[str, Any], model: str | type[BaseModel], what: str) -> dict[str, Any]:
    """``record`` with ``schema_version``, validated against ``model`` (RecordError if not):
    a record name of ``records.core_check`` (results, samples, judge) or a pydantic model."""
    from pydantic_core import ValidationError

    from psymetrics_core.records import core_check

    full = {"schema_version": RECORD_SCHEMA_VERSION, **record}
    try:
        if isinstance(model, str):
            return core_check.check(model, full)
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

    Each line is validated against ``model`` first (see :func:`checked`): by default the
    ``samples`` record (a ``psym eval`` sample); ``model=None`` writes lines unchecked (a
    plugin's own records).
    """

    def __init__(self, path: Path | None, model: str | type[BaseModel] | None = "samples") -> None:
        self.path = path
        self.model = model
        self._fh: IO[str] | None = None
        if path is not None:
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
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
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
