"""Shared fixtures: a model cache shared across the session, and a clean plugin manager."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session", autouse=True)
def _model_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep the dequantised SmolLM2 copy in one place for the whole test session.

    ``PSYM_TEST_CACHE_DIR`` (set by the Makefile) lets repeated test runs reuse it.
    """
    cache = os.environ.get("PSYM_TEST_CACHE_DIR") or str(tmp_path_factory.mktemp("psymcache"))
    os.environ["PSYM_CACHE_DIR"] = cache


@pytest.fixture
def fresh_plugins():
    """Rebuild the process-wide plugin manager before and after a test."""
    from psymetrics_core import plugins

    plugins.reset()
    yield plugins
    plugins.reset()


@pytest.fixture(scope="session")
def smollm2():
    """The real default model (SmolLM2-135M-Instruct on CPU), loaded once per session."""
    from psymetrics_core.runner import make_backend

    return make_backend("smollm2")
