"""Fixtures of the hf plugin's tests: a cache directory per session sharing only the model
copies (as the core's tests/conftest.py), and the real default model loaded once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session", autouse=True)
def _hf_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A fresh ``PSYM_CACHE_DIR`` per session; ``PSYM_TEST_CACHE_DIR/models`` (set by the
    Makefile) keeps the dequantised SmolLM2 copy between runs. Responses are never reused."""
    session_cache = os.environ.get("PSYM_TEST_SESSION_CACHE")
    if session_cache and os.environ.get("PSYM_CACHE_DIR") == session_cache:
        return  # the core's tests/conftest.py set one up for this session already
    cache = tmp_path_factory.mktemp("psymcache-hf")
    keep = os.environ.get("PSYM_TEST_CACHE_DIR")
    if keep:
        models = Path(keep) / "models"
        models.mkdir(parents=True, exist_ok=True)
        (cache / "models").symlink_to(models, target_is_directory=True)
    os.environ["PSYM_CACHE_DIR"] = str(cache)


@pytest.fixture(scope="session")
def smollm2(request: pytest.FixtureRequest, _hf_cache_dir: None) -> Any:
    """The real default model (SmolLM2-135M-Instruct on CPU), loaded once per session.

    Kept on the pytest config as ``psym_smollm2``: where the core's tests/conftest.py keeps
    its own there too, a run of both test trees loads the model once per process, not twice."""
    from psymetrics_core.api import session_or_default

    shared = getattr(request.config, "psym_smollm2", None)
    if shared is None:
        shared = session_or_default().make_backend("smollm2")
        request.config.psym_smollm2 = shared  # type: ignore[attr-defined]
    return shared


@pytest.fixture
def fresh_plugins() -> Any:
    """A fresh session of the installed plugins, handed to what the test calls."""
    from psymetrics_core.api import Session

    return Session()
