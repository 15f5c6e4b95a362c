"""Where psymetrics keeps things on disk: the cache directory (``$PSYM_CACHE_DIR``) and its
``models/`` folder of converted model copies (written by backend plugins, e.g. the GGUF
conversion of ``psymetrics-plugin-hf``; ``psym cache`` reports and removes leftovers)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import platformdirs

__all__ = ["cache_dir", "models_dir", "stale_conversions", "remove_stale_conversions"]


def cache_dir() -> Path:
    """psymetrics' cache directory: ``$PSYM_CACHE_DIR`` or the user cache directory."""
    env = os.environ.get("PSYM_CACHE_DIR")
    if env:
        return Path(env)

    return Path(platformdirs.user_cache_dir("psymetrics"))


def models_dir() -> Path:
    """Where converted model copies live: ``<cache_dir>/models/<key>`` (may not exist)."""
    return cache_dir() / "models"


def stale_conversions() -> list[tuple[Path, int]]:
    """Temporary folders of model conversions whose process is gone, with their sizes (bytes).

    A conversion writes ``models/<key>.tmp<pid>`` and renames it when complete; a process
    killed half-way leaves the folder behind.
    """
    models = models_dir()
    out: list[tuple[Path, int]] = []
    try:
        entries = list(models.iterdir()) if models.is_dir() else []
    except OSError:
        return []
    for p in entries:
        m = re.fullmatch(r".+\.tmp(\d+)", p.name)
        if m is None or _pid_alive(int(m.group(1))):
            continue
        size = sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else 0
        out.append((p, size))
    return out


def remove_stale_conversions() -> int:
    """Delete leftover conversion folders of dead processes; returns how many were removed."""
    stale = stale_conversions()
    for p, _ in stale:
        shutil.rmtree(p, ignore_errors=True)
    return len(stale)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
