"""Where psymetrics keeps things on disk: the cache directory (``$PSYM_CACHE_DIR``)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """psymetrics' cache directory: ``$PSYM_CACHE_DIR`` or the user cache directory."""
    env = os.environ.get("PSYM_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs  # a small dependency, needed only when no PSYM_CACHE_DIR is set

    return Path(platformdirs.user_cache_dir("psymetrics"))
