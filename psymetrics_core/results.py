"""Run records: ``results.json`` (scores, provenance) and ``samples.jsonl`` (one line per item)."""

from __future__ import annotations

import json
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

__all__ = ["SampleWriter", "write_results", "provenance", "redact"]

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


class SampleWriter:
    """Appends one JSON line per answered item and flushes it at once (nothing paid is lost)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fh: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = path.open("w", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        """Write one sample line."""
        if self._fh is not None:
            self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._fh.flush()

    def close(self) -> None:
        """Close the file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def write_results(path: Path, results: dict[str, Any]) -> None:
    """Write ``results.json`` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
