"""Fuzz suite, studies: damaged shard directories (``psym merge``).

Every case must end in one ``PsymError`` line naming the file and the field where there is one
(``harness.expect_clean_error``: no other exception, one line, within the time and memory
bounds). Split from test_fuzz_studies.py, which counts its cases.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error, shared_session
from studies_shared import BIG_INT, DEEP_ARRAY, json_edit, unblock

from psymetrics_core.base.types import Completion
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.study.plan import PlanSettings, build_plan


@pytest.fixture(scope="module")
def session() -> Session:
    return shared_session()


class _Scripted:
    """Answers every prompt "3" (a fake model: unit tests only)."""

    def generate(self, prompts: Any, settings: Any, reporter: Any = None) -> list[Completion]:
        return [Completion(text="3") for _ in prompts]

    def identity(self) -> dict[str, Any]:
        return {"backend": "scripted"}


@pytest.fixture(scope="module")
def shards(session: Session, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two complete shard directories of one plan (bfi, 2 items, 2 repeats)."""
    from psymetrics_core.study.shard import run_plan

    base = tmp_path_factory.mktemp("shards")
    plan = build_plan(PlanSettings.of(tasks=("bfi",), limit=2, repeats=2), session)
    for i in (1, 2):
        run_plan(plan, base / f"s{i}", (i, 2), session=session, backend=_Scripted(), cache=False)
    return base / "s1", base / "s2"


def _write(fname: str, raw: bytes) -> Callable[[Path], None]:
    return lambda d: (d / fname).write_bytes(raw)


def _record(key: str, value: Any) -> Callable[[Path], None]:
    return json_edit("shard.json", lambda r: r.__setitem__(key, value))


def _special_shard(d: Path) -> None:
    (d / "shard.json").unlink()
    os.mkfifo(d / "shard.json")
    unblock(d / "shard.json")


def _other_plan(d: Path) -> None:
    _record("plan", "f" * 64)(d)


def _drop_task(d: Path) -> None:
    json_edit("results.json", lambda r: r["tasks"].pop("bfi"))(d)


def _drop_runs(d: Path) -> None:
    json_edit("results.json", lambda r: r["tasks"]["bfi"].__setitem__("runs", []))(d)


# (name, edit of shard 2's directory, text the message must hold); merge of shard 1 and shard 2
SHARD_CASES: list[tuple[str, Callable[[Path], None], str]] = [
    ("shard-json-not-json", _write("shard.json", b"{nope"), "shard.json"),
    ("shard-json-not-utf8", _write("shard.json", b'{"plan": "\xff"}'), "shard.json"),
    ("shard-json-list", _write("shard.json", b"[]"), "shard.json"),
    ("shard-json-nested-100k", _write("shard.json", DEEP_ARRAY.encode()), "shard.json"),
    ("shard-json-huge-int", _write("shard.json", f'{{"plan": {BIG_INT}}}'.encode()), "shard.json"),
    ("shard-json-fifo", _special_shard, "FIFO"),
    ("shard-plan-int", _record("plan", 7), "field 'plan'"),
    ("shard-plan-missing", json_edit("shard.json", lambda r: r.pop("plan")), "field 'plan'"),
    ("shard-units-string", _record("units", "abc"), "field 'units'"),
    ("shard-units-not-hashes", _record("units", [1, 2]), "field 'units.0'"),
    ("shard-units-missing", json_edit("shard.json", lambda r: r.pop("units")), "field 'units'"),
    ("shard-shard-string", _record("shard", "2/2"), "field 'shard'"),
    ("shard-shard-three", _record("shard", [1, 2, 3]), "field 'shard'"),
    ("shard-shard-i-over-n", _record("shard", [3, 2]), "field 'shard'"),
    ("shard-complete-string", _record("complete", "yes"), "field 'complete'"),
    ("shard-extra-field", _record("note", 1), "field 'note'"),
    ("shard-incomplete", _record("complete", False), "incomplete"),
    ("shard-units-empty", _record("units", []), "in no shard"),
    ("shard-units-stray", _record("units", ["e" * 64]), "not in the plan"),
    ("shards-of-different-plans", _other_plan, "different plans"),
    ("results-missing", lambda d: (d / "results.json").unlink(), "no results.json"),
    ("results-task-missing", _drop_task, "field 'task"),
    ("results-runs-missing", _drop_runs, "runs"),
    ("results-nested-100k", _write("results.json", DEEP_ARRAY.encode()), "results.json"),
    ("results-huge-int", _write("results.json", f'{{"tasks": {BIG_INT}}}'.encode()), "results"),
    (
        "samples-huge-int",
        _write("samples.jsonl", f'{{"repeat": {BIG_INT}}}\n'.encode()),
        "samples.jsonl",
    ),
    ("samples-no-task", _write("samples.jsonl", b'{"x": 1}\n'), "samples.jsonl, line 1"),
    ("samples-not-utf8", _write("samples.jsonl", b'{"task": "\xff"}\n'), "samples.jsonl, line 1"),
    ("samples-list", _write("samples.jsonl", b"[1]\n"), "samples.jsonl, line 1"),
    ("plan-copy-damaged", _write("plan.jsonl", b"{}\n"), "plan.jsonl"),
]


@pytest.mark.parametrize("name, edit, expect", SHARD_CASES, ids=[c[0] for c in SHARD_CASES])
def test_fuzz_merge_damaged_shards(
    shards: tuple[Path, Path], session: Session, tmp_path: Path, name: str, edit: Any, expect: str
) -> None:
    from psymetrics_core.study.merge import merge_runs

    one, two = tmp_path / "s1", tmp_path / "s2"
    shutil.copytree(shards[0], one)
    shutil.copytree(shards[1], two)
    edit(two)
    # merge reads the plan copy of the first shard given
    dirs = [two, one] if name == "plan-copy-damaged" else [one, two]
    out = expect_clean_error(
        lambda: merge_runs(dirs, tmp_path / "merged", session), [], label=f"merge {name}"
    )
    assert expect in out.message, out.message
    assert not (tmp_path / "merged" / "results.json").exists()


def test_the_undamaged_shards_merge(
    shards: tuple[Path, Path], session: Session, tmp_path: Path
) -> None:
    """The base of the shard cases merges: each failure above is its edit's."""
    from psymetrics_core.study.merge import merge_runs

    report = merge_runs(list(shards), tmp_path / "merged", session)
    assert report.units == 2 and report.samples == 4


def test_fuzz_merge_two_damaged_shards(
    shards: tuple[Path, Path], session: Session, tmp_path: Path
) -> None:
    """Both shards damaged at once (wrong types in one, missing fields in the other)."""
    from psymetrics_core.study.merge import merge_runs

    one, two = tmp_path / "s1", tmp_path / "s2"
    shutil.copytree(shards[0], one)
    shutil.copytree(shards[1], two)
    _record("units", {"a": 1})(one)
    json_edit("shard.json", lambda r: r.pop("complete"))(two)
    out = expect_clean_error(lambda: merge_runs([one, two], tmp_path / "m", session), ["shard"])
    assert "field 'units'" in out.message
