"""Shared fixtures: a model cache shared across the session, and a clean plugin manager."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, give each worker its own share of the CPUs.

    Torch and ONNX Runtime size their thread pools from the CPUs a process may run on; two
    workers each spinning two threads on two cores are several times slower than one thread
    each. Worker ``gwI`` of ``N`` keeps ``1/N`` of the CPUs (its children inherit it).
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not worker or not count or not hasattr(os, "sched_setaffinity"):
        return
    cpus, n, i = sorted(os.sched_getaffinity(0)), int(count), int(worker.removeprefix("gw"))
    if n < 2 or len(cpus) < 2:
        return
    share = max(1, len(cpus) // n)
    start = (i * share) % len(cpus)
    os.sched_setaffinity(0, cpus[start : start + share])


@pytest.fixture(scope="session", autouse=True)
def _model_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A fresh cache directory per test session, sharing only the dequantised model copy.

    ``PSYM_TEST_CACHE_DIR`` (set by the Makefile) keeps the SmolLM2 safetensors copy between test
    runs; model responses are never reused across sessions, so every run really calls the model.
    """
    cache = tmp_path_factory.mktemp("psymcache")
    keep = os.environ.get("PSYM_TEST_CACHE_DIR")
    if keep:
        models = Path(keep) / "models"
        models.mkdir(parents=True, exist_ok=True)
        (cache / "models").symlink_to(models, target_is_directory=True)
    os.environ["PSYM_CACHE_DIR"] = str(cache)


@pytest.fixture
def fresh_plugins():
    """A fresh session of the installed plugins for the test to pass on (nothing is global).

    Yields the ``pluginsys.session.Session``: hand it to what the test calls (``session=``,
    ``main(argv, session=...)``); ``register(plugin, name)`` adds a plugin to it only,
    ``refresh()`` rebuilds its registries (after a spec file changed on disk).
    """
    from psymetrics_core.pluginsys.session import Session

    return Session()


@pytest.fixture(scope="session")
def smollm2():
    """The real default model (SmolLM2-135M-Instruct on CPU), loaded once per session."""
    from psymetrics_core.api import session_or_default

    return session_or_default().make_backend("smollm2")
