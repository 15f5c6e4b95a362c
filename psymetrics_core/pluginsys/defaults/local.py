"""Instruments from local folders named in ``PSYM_INSTRUMENTS_PATH`` (no plugin needed).

``PSYM_INSTRUMENTS_PATH`` lists folders separated by the OS path separator (``:`` on POSIX).
Each folder either holds an ``instrument.yaml`` itself or has one sub-folder per instrument,
as written by ``psym import psychobench ... --output DIR``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from psymetrics_core.pluginsys.hookspecs import hookimpl

__all__ = ["register_instruments", "local_specs"]


def local_specs() -> list[Path]:
    """Every ``instrument.yaml`` found through ``PSYM_INSTRUMENTS_PATH``."""
    out: list[Path] = []
    for entry in (os.environ.get("PSYM_INSTRUMENTS_PATH") or "").split(os.pathsep):
        if not entry.strip():
            continue
        root = Path(entry.strip()).expanduser()
        if (root / "instrument.yaml").is_file():
            out.append(root / "instrument.yaml")
        elif root.is_dir():
            out += sorted(p for p in root.glob("*/instrument.yaml") if p.is_file())
    return out


@hookimpl(trylast=True)
def register_instruments(register: Callable[..., None]) -> None:
    """Register the instruments of ``PSYM_INSTRUMENTS_PATH``."""
    for spec in local_specs():
        register(spec)
