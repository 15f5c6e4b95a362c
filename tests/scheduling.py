"""How ``make unit`` shares the tests between pytest-xdist workers (``--dist loadgroup``).

``--dist loadfile`` kept each file on one worker, so a file of slow tests (the five paper pages'
model runs, the docs' runnable commands) ran end to end on one core while the other idled, and
xdist sent the files with few tests (often the slowest ones) last. Instead:

- a test that uses a module-, class- or package-scoped fixture joins its module's group, so that
  fixture (a server, a model run, a built site) is set up once, on one worker; such a fixture
  with params gives one group per param value (test_end_to_end_model's two answer modes run on
  two workers). A session-scoped fixture is set up once per worker: that scope suits what is
  cheap to repeat (a loopback server, a wrapper of the loaded model), and lets its tests spread;
- a test's own ``xdist_group`` mark names its group instead: tests of several files that make
  the same model calls share a worker, and so the session's response cache
  (``smollm2-bfi-mfq``: bfi,mfq on the default model in test_end_to_end_model, test_docs'
  first-run command and test_report_browser, which ran the 76 items up to three times);
- every other test is a unit of its own, free to run on either worker;
- units run longest first (longest-processing-time scheduling, Graham 1969): by the durations of
  the last run, which the controller keeps in pytest's cache (``.pytest_cache``) and hands to
  every worker so that all of them collect the same order; without a record (a fresh checkout,
  CI) the units with a test marked ``model`` go first. Many short tests are left for the end,
  so both workers finish at about the same time.

Nothing is skipped or merged: the same tests run, only their order and placement change.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

DURATIONS_KEY = "psym/test-durations"
WORKER_KEY = "psym_test_durations"
GROUPS_KEY = "psym_test_groups"  # the file a worker writes each grouped test's group to
UNKNOWN_S = 0.1  # a test the record does not know yet (new, or renamed)
MODEL_S = 10.0  # ... when it is marked ``model`` (a real SmolLM2 run)
# a fixture of one of these scopes is set up once for the tests of its module, class or package
SHARED = ("module", "class", "package")


def _test_id(nodeid: str) -> str:
    """The test's id without the ``@group`` suffix that loadgroup adds."""
    head, at, group = nodeid.rpartition("@")
    return head if at and "]" not in group and "::" in head else nodeid


def explicit_group(item: pytest.Item) -> str | None:
    """The group named by the test's own ``xdist_group`` marks, as xdist joins them."""
    marks = item.iter_markers("xdist_group")
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in marks}
    return "_".join(sorted(names)) if names else None


def group_of(item: pytest.Item) -> str | None:
    """The group ``item`` must share a worker with, or None when it may run anywhere: the one
    its ``xdist_group`` marks name, else its module's when it uses a shared fixture."""
    explicit = explicit_group(item)
    if explicit is not None:
        return explicit
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    params = getattr(getattr(item, "callspec", None), "indices", {})
    shared = [name for name, defs in info.name2fixturedefs.items() if defs[-1].scope in SHARED]
    if not shared:
        return None
    # no "]" or "@" in a group name: xdist splits the group off the node id at the last "@"
    # after the last "]"
    values = ",".join(sorted(f"{name}={params[name]}" for name in shared if name in params))
    module = item.nodeid.split("::", 1)[0]
    return f"{module}:{values}" if values else module


def _weight(item: pytest.Item, durations: Mapping[str, float]) -> float:
    known = durations.get(_test_id(item.nodeid))
    if known is not None:
        return known
    return MODEL_S if item.get_closest_marker("model") else UNKNOWN_S


def group_and_order(items: list[pytest.Item], durations: Mapping[str, float]) -> None:
    """Mark each test's group and sort the units longest first (in place; stable within one)."""
    units: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        group = group_of(item)
        if group is not None and explicit_group(item) is None:
            item.add_marker(pytest.mark.xdist_group(group))
        units.setdefault(group or f"#{i}", []).append(i)
    weight = {u: sum(_weight(items[i], durations) for i in idx) for u, idx in units.items()}
    ordered = sorted(units, key=lambda u: (-weight[u], units[u][0]))
    items[:] = [items[i] for u in ordered for i in units[u]]


def read_durations(config: pytest.Config) -> dict[str, float]:
    """The last run's seconds per test (setup, call and teardown), or {} without a record."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return dict(workerinput.get(WORKER_KEY, {}))
    cache = getattr(config, "cache", None)
    if cache is None:
        return {}
    record = cache.get(DURATIONS_KEY, {})
    return record if isinstance(record, dict) else {}


class DurationRecorder:
    """Adds up each test's phases as the reports arrive (on the controller under xdist) and
    writes them into pytest's cache at the end, merged over the previous record."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        key = _test_id(report.nodeid)
        self.seconds[key] = self.seconds.get(key, 0.0) + report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        cache = getattr(self.config, "cache", None)
        if cache is None or not self.seconds:
            return
        record: dict[str, Any] = read_durations(self.config)
        record.update({k: round(v, 3) for k, v in self.seconds.items()})
        cache.set(DURATIONS_KEY, record)


class GroupScheduling(LoadScopeScheduling):
    """xdist's scheduling by work units, with the units of :func:`group_of`.

    xdist 3.8's ``--dist loadgroup`` marks a group by appending ``@group`` to ``item._nodeid``,
    which pytest 9 no longer reads (node ids live in ``item._id``): every test became a unit of
    its own, module fixtures set up on both workers. Here the first worker writes the groups it
    collected to a file, and the controller reads them when it splits the work.
    """

    def __init__(self, config: pytest.Config, log: Any, groups_file: Path) -> None:
        super().__init__(config, log)
        self.groups_file = groups_file
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:  # first called once every worker has collected
            self._groups = read_groups(self.groups_file)
        return self._groups.get(nodeid, nodeid)


def read_groups(path: Path, wait: float = 60.0) -> dict[str, str]:
    """The groups the first worker wrote; it writes them before it reports its collection, so
    the file is there when the scheduler asks. Without it the run would silently set up every
    shared fixture on both workers (each test its own unit): wait briefly, then stop loudly."""
    deadline = time.monotonic() + wait
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path}: the first xdist worker wrote no test groups")
        time.sleep(0.05)
    groups = json.loads(path.read_text())
    assert isinstance(groups, dict)
    return groups


def write_groups(items: list[pytest.Item], path: Path) -> None:
    """Each grouped test's node id and group, for :class:`GroupScheduling` (atomic)."""
    groups = {item.nodeid: g for item in items if (g := group_of(item)) is not None}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(groups))
    tmp.replace(path)
