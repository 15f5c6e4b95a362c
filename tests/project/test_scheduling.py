"""How ``make unit`` places the tests on the xdist workers (tests/scheduling.py).

The items here are stand-ins with the few attributes the scheduler reads (a node id, the
fixtures a test uses with their scopes, the params of its call, its markers).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from scheduling import DURATIONS_KEY, DurationRecorder, _test_id, group_and_order, group_of


class _Item:
    def __init__(
        self, nodeid: str, fixtures: dict[str, str], params=None, model=False, marks=()
    ) -> None:
        self.nodeid = nodeid
        self.marks = [pytest.mark.xdist_group(name).mark for name in marks]
        defs = {name: [SimpleNamespace(scope=scope)] for name, scope in fixtures.items()}
        self._fixtureinfo = SimpleNamespace(name2fixturedefs=defs)
        if params is not None:
            self.callspec = SimpleNamespace(indices=params)
        self.model = model
        self.groups: list[str] = []

    def get_closest_marker(self, name: str) -> Any:
        return object() if name == "model" and self.model else None

    def iter_markers(self, name: str) -> list[Any]:
        return self.marks if name == "xdist_group" else []

    def add_marker(self, mark: Any) -> None:
        self.groups.append(mark.args[0])


def test_a_module_fixture_keeps_its_tests_together_and_the_rest_spread() -> None:
    a1 = _Item("tests/a.py::t1", {"server": "module", "tmp_path": "function"})
    a2 = _Item("tests/a.py::t2", {"tmp_path": "function"})
    a3 = _Item("tests/a.py::t3", {"server": "module", "smollm2": "session"})
    b1 = _Item("tests/b.py::t1", {"smollm2": "session"})
    assert [group_of(i) for i in (a1, a2, a3, b1)] == ["tests/a.py", None, "tests/a.py", None]
    c = _Item("tests/c.py::C::t", {"conn": "class"})
    assert group_of(c) == "tests/c.py"


def test_a_named_group_wins_and_gets_no_second_name() -> None:
    """A test's own ``xdist_group`` mark places it (xdist joins several names with "_"); the
    scheduler adds no module group to it, which would make a third name."""
    e2e = _Item("tests/e.py::t", {"run": "module"}, marks=["smollm2-runs"])
    docs = _Item("tests/d.py::t[first-run]", {"tmp_path": "function"}, marks=["smollm2-runs"])
    both = _Item("tests/x.py::t", {}, marks=["b", "a"])
    assert (group_of(e2e), group_of(docs), group_of(both)) == (
        "smollm2-runs",
        "smollm2-runs",
        "a_b",
    )
    other = _Item("tests/o.py::t", {})
    items = [other, docs, e2e]
    group_and_order(items, {"tests/e.py::t": 5.0, "tests/d.py::t[first-run]": 1.0})
    assert items == [docs, e2e, other]  # one unit of 6 s, kept in collection order within
    assert e2e.groups == docs.groups == other.groups == []


def test_a_parametrized_module_fixture_gives_one_group_per_param() -> None:
    gen = _Item("tests/e.py::t[generate]", {"run": "module"}, params={"run": 0})
    lp = _Item("tests/e.py::t[logprob]", {"run": "module"}, params={"run": 1})
    fn = _Item("tests/e.py::u[x]", {"run": "module"}, params={"run": 1, "other": 0})
    assert (group_of(gen), group_of(lp), group_of(fn)) == (
        "tests/e.py:run=0",
        "tests/e.py:run=1",
        "tests/e.py:run=1",
    )
    # xdist reads the group after the last "@" that follows the last "]" of the node id
    assert all("]" not in g and "@" not in g for g in (group_of(gen), group_of(lp)))


def test_units_run_longest_first_and_stay_in_order_within() -> None:
    short = _Item("tests/a.py::short", {})
    g1 = _Item("tests/b.py::one", {"srv": "module"})
    g2 = _Item("tests/b.py::two", {"srv": "module"})
    long = _Item("tests/c.py::long", {})
    items = [short, g1, g2, long]
    durations = {"tests/a.py::short": 0.5, "tests/b.py::one": 3.0, "tests/b.py::two": 4.0}
    durations["tests/c.py::long"] = 6.0
    group_and_order(items, durations)
    # b's group weighs 7 s (3 + 4), before c (6 s) and a (0.5 s); one, two keep their order
    assert [i.nodeid.split("::")[1] for i in items] == ["one", "two", "long", "short"]
    assert g1.groups == g2.groups == ["tests/b.py"] and short.groups == long.groups == []


def test_without_a_record_the_model_tests_go_first() -> None:
    items = [_Item(f"tests/t.py::t{i}", {}, model=i in (2, 4)) for i in range(5)]
    group_and_order(items, {})
    assert [i.nodeid[-2:] for i in items] == ["t2", "t4", "t0", "t1", "t3"]


def test_the_group_suffix_is_not_part_of_the_test_id() -> None:
    assert _test_id("tests/a.py::t[x]@tests/a.py:run=0") == "tests/a.py::t[x]"
    assert _test_id("tests/a.py::t@tests/a.py") == "tests/a.py::t"
    assert _test_id("tests/a.py::t[user@host]") == "tests/a.py::t[user@host]"  # a param's "@"


def test_the_recorder_adds_the_phases_and_merges_into_the_record() -> None:
    class Cache(dict):
        def set(self, key: str, value: Any) -> None:
            self[key] = value

    cache = Cache({DURATIONS_KEY: {"tests/old.py::t": 2.0, "tests/a.py::t": 9.0}})
    rec = DurationRecorder(SimpleNamespace(cache=cache))
    for phase_s in (0.25, 1.5, 0.25):  # setup, call, teardown
        rec.pytest_runtest_logreport(SimpleNamespace(nodeid="tests/a.py::t@g", duration=phase_s))
    rec.pytest_sessionfinish(SimpleNamespace())
    assert cache[DURATIONS_KEY] == {"tests/old.py::t": 2.0, "tests/a.py::t": 2.0}


@pytest.mark.parametrize("record", [None, [1, 2], "x"])
def test_a_missing_or_odd_record_reads_as_empty(record: Any) -> None:
    from scheduling import read_durations

    cache = SimpleNamespace(get=lambda key, default: default if record is None else record)
    assert read_durations(SimpleNamespace(cache=cache)) == {}


def test_the_controller_splits_the_work_by_the_groups_a_worker_wrote(tmp_path: Path) -> None:
    from scheduling import GroupScheduling, write_groups

    grouped = _Item("tests/a.py::t1", {"server": "module"})
    free = _Item("tests/a.py::t2", {})
    write_groups([grouped, free], tmp_path / "groups.json")
    sched = GroupScheduling.__new__(GroupScheduling)  # the xdist part needs a live session
    sched.groups_file, sched._groups = tmp_path / "groups.json", None
    assert sched._split_scope("tests/a.py::t1") == "tests/a.py"
    assert sched._split_scope("tests/a.py::t2") == "tests/a.py::t2"  # a unit of its own


def test_the_groups_file_is_awaited_and_its_absence_stops_the_run(tmp_path: Path) -> None:
    """A groups file written late (the first worker still in its collection hooks) is read
    when it appears; one that never appears stops the scheduler instead of silently making
    every test a unit of its own (shared fixtures set up on both workers: the fault a full
    `make test` showed when the controller read before the worker wrote)."""
    import threading

    from scheduling import read_groups

    path = tmp_path / "groups.json"
    later = threading.Timer(0.2, lambda: path.write_text('{"tests/a.py::t1": "tests/a.py"}'))
    later.start()
    assert read_groups(path, wait=10.0) == {"tests/a.py::t1": "tests/a.py"}
    with pytest.raises(RuntimeError, match="wrote no test groups"):
        read_groups(tmp_path / "never.json", wait=0.1)
