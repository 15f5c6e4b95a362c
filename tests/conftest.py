"""Shared fixtures: a model cache shared across the session, and a clean plugin manager."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from scheduling import (
    GROUPS_KEY,
    WORKER_KEY,
    DurationRecorder,
    GroupScheduling,
    group_and_order,
    read_durations,
    write_groups,
)

REPO = Path(__file__).resolve().parents[1]
SESSION_CACHE_KEY = "psym_session_cache"  # the controller's shared cache, handed to each worker
SESSION_CACHE_ENV = "PSYM_TEST_SESSION_CACHE"  # the session's cache, for plugins' conftests
SHARED_DATA = REPO.parent / "shared" / "data"


def pytest_configure(config: pytest.Config) -> None:
    """Pin an xdist worker to its share of the CPUs; record the durations on the controller."""
    _pin_worker_cpus()
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        config.pluginmanager.register(DurationRecorder(config), "psym-test-durations")


def _pin_worker_cpus() -> None:
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


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Hand every xdist worker the controller's record, so all of them sort alike, and the
    file the first worker writes the groups to."""
    node.workerinput[WORKER_KEY] = read_durations(node.config)
    node.workerinput[GROUPS_KEY] = str(_groups_file(node.config))
    node.workerinput[SESSION_CACHE_KEY] = str(_session_cache(node.config))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``: the work units of tests/scheduling.py."""
    if config.getvalue("dist") != "loadgroup":
        return None
    return GroupScheduling(config, log, _groups_file(config))


def _session_cache(config: pytest.Config) -> Path:
    """The response cache of this test session, one for the controller and all its workers."""
    factory = config._tmp_path_factory  # type: ignore[attr-defined]
    cache = factory.getbasetemp() / "psymcache"
    if not cache.is_dir():
        cache.mkdir()
        _share_models(cache)
    return cache


def _share_models(cache: Path) -> None:
    """``PSYM_TEST_CACHE_DIR/models`` (set by the Makefile) keeps the dequantised SmolLM2 copy
    between test runs; only the model files, never responses."""
    keep = os.environ.get("PSYM_TEST_CACHE_DIR")
    if keep:
        models = Path(keep) / "models"
        models.mkdir(parents=True, exist_ok=True)
        (cache / "models").symlink_to(models, target_is_directory=True)


def _groups_file(config: pytest.Config) -> Path:
    """One file per session on the controller, under pytest's base temporary directory."""
    factory = config._tmp_path_factory  # type: ignore[attr-defined]
    return factory.getbasetemp() / "xdist-groups.json"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """On the first xdist worker: write the groups for the controller's scheduler, before
    xdist's own hook tells the controller that this worker's collection is finished (tryfirst:
    the controller schedules as soon as every worker has said so, and reads the file then)."""
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput and workerinput.get("workerid") == "gw0" and GROUPS_KEY in workerinput:
        write_groups(session.items, Path(workerinput[GROUPS_KEY]))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker: group the tests and order them longest first (tests/scheduling.py)."""
    if hasattr(config, "workerinput"):
        group_and_order(items, read_durations(config))


@pytest.fixture(scope="session", autouse=True)
def _model_cache_dir(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A fresh response cache per test session, shared by all xdist workers of the session.

    The first test asking the default model for a request computes it; any other test of the
    session, on either worker, asking the same request reads it (the cache's leases make a
    worker wait for a request the other is computing rather than compute it twice). Responses
    are never reused across sessions, so every ``make test`` really calls the model; tests of
    the cache itself (resume, kill, reruns) set up their own ``PSYM_CACHE_DIR``.
    """
    workerinput = getattr(request.config, "workerinput", None)
    if workerinput and SESSION_CACHE_KEY in workerinput:
        cache = Path(workerinput[SESSION_CACHE_KEY])
    else:
        cache = tmp_path_factory.mktemp("psymcache")
        _share_models(cache)
    os.environ["PSYM_CACHE_DIR"] = str(cache)
    os.environ[SESSION_CACHE_ENV] = str(cache)


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
def smollm2(request: pytest.FixtureRequest):
    """The real default model (SmolLM2-135M-Instruct on CPU), loaded once per session.

    Kept on the pytest config as ``psym_smollm2``, as the hf plugin's conftest keeps its own:
    a run of both test trees loads the model once per process, not twice."""
    from psymetrics_core.api import session_or_default

    shared = getattr(request.config, "psym_smollm2", None)
    if shared is None:
        shared = session_or_default().make_backend("smollm2")
        request.config.psym_smollm2 = shared  # type: ignore[attr-defined]
    return shared
