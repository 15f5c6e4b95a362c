"""Run records: ``results.json`` (scores, provenance) and ``samples.jsonl`` (one line per item)."""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from .errors import PsymError

__all__ = ["SampleWriter", "write_results", "provenance", "redact"]

_SECRET_WORDS = ("key", "token", "secret", "password", "authorization")


def redact(args: dict[str, Any]) -> dict[str, Any]:
    """Copy of ``args`` with values of secret-looking keys replaced (``api_key_env`` is a name).

    Credentials inside URL values (``user:key@`` or a ``?api_key=`` query) are masked too.
    """
    from .redaction import redact_url

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


class SampleWriter:
    """Appends one JSON line per answered item and flushes it at once (nothing paid is lost)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fh: IO[str] | None = None
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = path.open("w", encoding="utf-8")
            except OSError as exc:
                raise PsymError(f"{path}: cannot write samples ({exc.strerror or exc})") from None

    def write(self, record: dict[str, Any]) -> None:
        """Write one sample line."""
        if self._fh is not None:
            try:
                self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
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


def write_results(path: Path, results: dict[str, Any]) -> None:
    """Write ``results.json`` atomically: a complete file or none, always valid JSON.

    A non-finite number (NaN, Infinity: not JSON) is written as ``null``.
    """
    text = json.dumps(_finite(results), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
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
