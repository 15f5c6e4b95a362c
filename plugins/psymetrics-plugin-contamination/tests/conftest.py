"""Fixtures of the contamination plugin's tests: a private response cache per session."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
# the paper's text, where the checkout sits next to the shared folder (../shared/seeds)
SEEDS = next(
    (p / "shared" / "seeds" for p in REPO.parents if (p / "shared" / "seeds").is_dir()),
    REPO.parent / "shared" / "seeds",
)
DATA = REPO / "tests" / "data"
sys.path.insert(0, str(HERE))  # oracle_server


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets an empty response cache (model copies are shared via the test cache)."""
    cache = tmp_path / "psymcache"
    cache.mkdir()
    keep = os.environ.get("PSYM_TEST_CACHE_DIR")
    if keep:
        models = Path(keep) / "models"
        models.mkdir(parents=True, exist_ok=True)
        (cache / "models").symlink_to(models, target_is_directory=True)
    monkeypatch.setenv("PSYM_CACHE_DIR", str(cache))
    return cache
