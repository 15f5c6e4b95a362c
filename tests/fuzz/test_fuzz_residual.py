"""Fuzz suite, the residual hostile inputs of issue 31 (item 10) outside the population surface.

Each input ends in one ``psym: ...`` line naming it, exit 1 (``harness.expect_clean_error``
through the real command line, ``harness.run_cli``), or is held by a documented bound:

- a Dask scheduler address that is malformed or dead, and a Batch API server that never
  answers (test_fuzz_residual_remote.py);
- ``psym merge`` of a shard whose ``samples.jsonl`` was altered after the run (its own
  ``results.json`` records the line count and sha256 it verifies);
- ``--shard 1/1000000000000`` (N is bounded as ``--shards`` is, docs/reference/bounds.md);
- a persona JSON or YAML file whose ``system`` is not text, and a reference-letter generations
  file whose ``text`` is null.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error, run_cli, shared_session
from test_fuzz_residual_remote import SCHEDULERS

from psymetrics_core.base.types import Completion
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.study.plan import PlanSettings, build_plan, write_plan


@pytest.fixture(scope="module")
def session() -> Session:
    return shared_session()


@pytest.fixture(scope="module")
def plan_path(session: Session, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A valid plan (bfi, 2 items, 2 repeats = 2 units)."""
    path = tmp_path_factory.mktemp("plan") / "plan.jsonl"
    write_plan(build_plan(PlanSettings.of(tasks=("bfi",), limit=2, repeats=2), session), path)
    return path


# -- psym merge of a shard altered after its run ------------------------------------------------


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


def _lines(edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> Callable[[Path], None]:
    """Rewrite the shard's samples.jsonl, line by line, through ``edit``."""

    def apply(d: Path) -> None:
        rows = [json.loads(x) for x in (d / "samples.jsonl").read_text().splitlines()]
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in edit(rows))
        (d / "samples.jsonl").write_text(text)

    return apply


def _set(i: int, key: str, value: Any) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[i][key] = value
        return rows

    return edit


def _results(edit: Callable[[dict[str, Any]], Any]) -> Callable[[Path], None]:
    def apply(d: Path) -> None:
        data = json.loads((d / "results.json").read_text())
        edit(data)
        (d / "results.json").write_text(json.dumps(data))

    return apply


def _append(raw: bytes) -> Callable[[Path], None]:
    def apply(d: Path) -> None:
        with (d / "samples.jsonl").open("ab") as fh:
            fh.write(raw)

    return apply


def _flip(d: Path) -> None:
    """The first answer "3" made "4" in place (the parsed answer and keyed values kept)."""
    path = d / "samples.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"completion": "3"', b'"completion": "4"', 1))


# (name, edit of shard 2, text the message must hold); every case passes the count checks
TAMPERED: list[tuple[str, Callable[[Path], None], str | None]] = [
    ("completion-changed", _lines(_set(0, "completion", "5")), "sha256"),
    ("completion-spaced", _lines(_set(0, "completion", "3 ")), "sha256"),
    ("lines-swapped", _lines(lambda rows: rows[::-1]), "sha256"),
    ("keys-reordered", _lines(lambda rows: [dict(reversed(r.items())) for r in rows]), "sha256"),
    ("blank-line-added", _append(b"\n"), "line(s)"),
    ("byte-flipped", _flip, "sha256"),
    ("records-removed", _results(lambda r: r.pop("records")), "no field 'records'"),
    (
        "records-sha-edited",
        _results(lambda r: r["records"]["samples.jsonl"].__setitem__("sha256", "0" * 64)),
        "sha256",
    ),
    (
        "records-lines-edited",
        _results(lambda r: r["records"]["samples.jsonl"].__setitem__("lines", 9)),
        "line(s)",
    ),
    (
        "records-sha-not-hex",
        _results(lambda r: r["records"]["samples.jsonl"].__setitem__("sha256", "z")),
        "records",
    ),
    ("judge-file-added", lambda d: (d / "judge.jsonl").write_bytes(b""), None),
]


@pytest.mark.parametrize("name, edit, expect", TAMPERED, ids=[c[0] for c in TAMPERED])
def test_fuzz_merge_refuses_a_tampered_shard(
    shards: tuple[Path, Path], tmp_path: Path, name: str, edit: Any, expect: str | None
) -> None:
    one, two = tmp_path / "s1", tmp_path / "s2"
    shutil.copytree(shards[0], one)
    shutil.copytree(shards[1], two)
    edit(two)
    argv = ["merge", str(one), str(two), "-o", str(tmp_path / "merged")]
    if expect is None:  # an empty judge.jsonl holds no record: nothing was altered
        run_cli(argv)
        return
    out = expect_clean_error(lambda: run_cli(argv), [str(two)], label=f"merge {name}")
    assert expect in out.message, out.message
    assert not (tmp_path / "merged" / "results.json").exists()


def test_fuzz_merge_refuses_records_in_a_shard_of_no_units(
    session: Session, shards: tuple[Path, Path], tmp_path: Path
) -> None:
    """3 shards of a 2-unit plan: the third ran nothing, so a line added to its empty
    samples.jsonl has no results.json to verify it and is refused (not silently dropped)."""
    from psymetrics_core.study.shard import run_plan

    plan = build_plan(PlanSettings.of(tasks=("bfi",), limit=2, repeats=2), session)
    dirs = [tmp_path / f"t{i}" for i in (1, 2, 3)]
    for i, d in enumerate(dirs, 1):
        run_plan(plan, d, (i, 3), session=session, backend=_Scripted(), cache=False)
    assert (dirs[2] / "samples.jsonl").read_bytes() == b""
    run_cli(["merge", *map(str, dirs), "-o", str(tmp_path / "ok")])  # untouched: merges
    line = (shards[0] / "samples.jsonl").read_text().splitlines()[0]
    (dirs[2] / "samples.jsonl").write_text(line + "\n")
    argv = ["merge", *map(str, dirs), "-o", str(tmp_path / "m")]
    out = expect_clean_error(lambda: run_cli(argv), [str(dirs[2] / "samples.jsonl")])
    assert "no results.json" in out.message, out.message


def _sha(path: Path) -> tuple[int, str]:
    blob = path.read_bytes()
    return blob.count(b"\n"), hashlib.sha256(blob).hexdigest()


def test_results_record_their_samples_and_merge_keeps_them_true(
    shards: tuple[Path, Path], tmp_path: Path
) -> None:
    """Each shard's results.json states its samples.jsonl's line count and sha256 (checked with
    hashlib over the file's bytes), and the merged run states its own merged file's."""
    for d in shards:
        got = json.loads((d / "results.json").read_text())["records"]["samples.jsonl"]
        assert (got["lines"], got["sha256"]) == _sha(d / "samples.jsonl")
        assert got["lines"] == 2  # one unit of 2 items per shard
    run_cli(["merge", *map(str, shards), "-o", str(tmp_path / "m")])
    merged = json.loads((tmp_path / "m" / "results.json").read_text())["records"]
    assert set(merged) == {"samples.jsonl"}
    lines, sha = _sha(tmp_path / "m" / "samples.jsonl")
    assert (merged["samples.jsonl"]["lines"], merged["samples.jsonl"]["sha256"]) == (4, sha)
    assert lines == 4


# -- --shard i/N with a huge N ------------------------------------------------------------------

SHARD_SPECS: list[tuple[str, str, str]] = [
    ("n-1e12", "1/1000000000000", "--shard N must be an integer in 1-1000"),
    ("n-1001", "1/1001", "--shard N must be an integer in 1-1000"),
    ("n-1e400", "1/1" + "0" * 400, "--shard"),
    ("i-over-n", "3/2", "1 <= i <= N"),
    ("i-zero", "0/2", "1 <= i <= N"),
    ("no-slash", "12", "i/N"),
    ("text", "a/b", "i/N"),
]


@pytest.mark.parametrize("name, spec, expect", SHARD_SPECS, ids=[c[0] for c in SHARD_SPECS])
def test_fuzz_shard_spec(
    plan_path: Path, tmp_path: Path, name: str, spec: str, expect: str
) -> None:
    argv = ["run", str(plan_path), "--shard", spec, "-o", str(tmp_path / "out")]
    out = expect_clean_error(lambda: run_cli(argv), ["--shard"], label=name)
    assert expect in out.message and len(out.message) < 300, out.message
    assert not (tmp_path / "out").exists()


def test_the_shard_bound_holds_in_the_library_and_in_shard_json(
    session: Session, shards: tuple[Path, Path], tmp_path: Path
) -> None:
    """``Plan.shard`` (where shard.json is written) and the shard.json reader refuse N > 1000;
    N = 1000 (the documented bound) is accepted."""
    from psymetrics_core.study.merge import merge_runs

    plan = build_plan(PlanSettings.of(tasks=("bfi",), limit=2, repeats=2), session)
    assert len(plan.shard(1, 1000)) == 1
    expect_clean_error(lambda: plan.shard(1, 10**12), ["--shard N", "1-1000"])
    two = tmp_path / "s2"
    shutil.copytree(shards[1], two)
    rec = json.loads((two / "shard.json").read_text())
    rec["shard"] = [2, 10**12]
    (two / "shard.json").write_text(json.dumps(rec))
    out = expect_clean_error(
        lambda: merge_runs([shards[0], two], tmp_path / "m", session), ["shard.json"]
    )
    assert "field 'shard'" in out.message and "1-1000" in out.message, out.message


# -- persona profiles and reference-letter generations ------------------------------------------

PERSONAS: list[tuple[str, str, bytes, str]] = [
    ("json-system-number", "p.json", b'{"system": 5}', "field 'system'"),
    ("json-system-null", "p.json", b'{"name": "Ann", "system": null}', "field 'system'"),
    ("json-system-list", "p.json", b'{"system": ["a"]}', "field 'system'"),
    ("json-system-prompt-bool", "p.json", b'{"system_prompt": true}', "field 'system_prompt'"),
    ("json-prompt-mapping", "p.json", b'{"prompt": {"a": 1}}', "field 'prompt'"),
    ("yaml-system-number", "p.yaml", b"system: 5\n", "field 'system'"),
    ("yaml-system-date", "p.yaml", b"system: 2024-01-01\n", "field 'system'"),
]


@pytest.mark.parametrize("name, fname, raw, expect", PERSONAS, ids=[c[0] for c in PERSONAS])
def test_fuzz_persona_system_not_text(
    session: Session, tmp_path: Path, name: str, fname: str, raw: bytes, expect: str
) -> None:
    """``--condition persona=FILE`` as ``psym eval`` and ``psym plan`` build it (the command
    itself: ``test_fuzz_residual_through_the_real_command``)."""
    from psymetrics_core.administer.conditions import cells_for

    p = tmp_path / fname
    p.write_bytes(raw)
    out = expect_clean_error(lambda: cells_for([f"persona={p}"], session), [str(p)], label=name)
    assert expect in out.message and "text" in out.message, out.message


def test_a_persona_with_a_text_system_prompt_is_used(session: Session, tmp_path: Path) -> None:
    from psymetrics_core.administer.conditions import cells_for

    p = tmp_path / "p.json"
    p.write_text('{"name": "Ann", "system": "You are Ann, a nurse."}')
    (cell,) = cells_for([f"persona={p}"], session)
    msgs = cell.apply_messages([{"role": "user", "content": "Q"}])
    assert msgs[0] == {"role": "system", "content": "You are Ann, a nurse."}


GENERATIONS: list[tuple[str, bytes, str]] = [
    ("text-null", b'{"item": "f-20-student", "text": null}\n', "line 1: field 'text'"),
    (
        "text-null-line-2",
        b'{"item": "f-20-student", "text": "Dear"}\n{"item": "m-20-student", "text": null}\n',
        "line 2: field 'text'",
    ),
    ("text-list", b'{"item": "f-20-student", "text": ["a"]}\n', "line 1: field 'text'"),
    ("text-bool", b'{"item": "f-20-student", "text": false}\n', "line 1: field 'text'"),
    (
        "completion-number",
        b'{"item": "f-20-student", "completion": 3}\n',
        "line 1: field 'completion'",
    ),
]


@pytest.mark.parametrize("name, raw, expect", GENERATIONS, ids=[c[0] for c in GENERATIONS])
def test_fuzz_refletter_generations(
    session: Session, tmp_path: Path, name: str, raw: bytes, expect: str
) -> None:
    """The reader of ``psym score --task refletter --responses FILE`` (the command itself:
    ``test_fuzz_residual_through_the_real_command``)."""
    from psymetrics_core.administer.answer_files import read_generations

    task = session.get_instrument("refletter")
    p = tmp_path / "letters.jsonl"
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_generations(p, task), [str(p)], label=name)
    assert expect in out.message, out.message


def test_an_empty_letter_is_still_scored_as_unparsed(session: Session, tmp_path: Path) -> None:
    """ "" (no letter) is valid input, unlike null: it is read as an empty generation."""
    from psymetrics_core.administer.answer_files import read_generations

    p = tmp_path / "letters.jsonl"
    p.write_text('{"item": "f-20-student", "text": ""}\n')
    ((item, text),) = read_generations(p, session.get_instrument("refletter"))["all"]
    assert item.id == "f-20-student" and text == ""


def test_fuzz_residual_through_the_real_command(
    plan_path: Path, shards: tuple[Path, Path], tmp_path: Path
) -> None:
    """A sample of the inputs above through ``python -m psymetrics_core``: exit 1 and exactly
    one ``psym: error:`` line on stderr naming the input, no traceback, no output written."""
    pytest.importorskip("distributed")
    persona = tmp_path / "p.json"
    persona.write_text('{"system": 5}')
    letters = tmp_path / "letters.jsonl"
    letters.write_text('{"item": "f-20-student", "text": null}\n')
    two = tmp_path / "s2"
    shutil.copytree(shards[1], two)
    _lines(_set(0, "completion", "5"))(two)
    out = str(tmp_path / "out")
    cases = [
        (["run", str(plan_path), "--shard", "1/1000000000000", "-o", out], "--shard N"),
        (
            ["run", str(plan_path), "--executor", "dask", "--scheduler", "nonsense", "-o", out],
            "--scheduler 'nonsense'",
        ),
        (["merge", str(shards[0]), str(two), "-o", out], str(two / "samples.jsonl")),
        (
            ["plan", "--tasks", "bfi", "--condition", f"persona={persona}", "-o", out],
            f"{persona}, field 'system'",
        ),
        (
            ["score", "--task", "refletter", "--responses", str(letters)],
            f"{letters}, line 1: field 'text'",
        ),
    ]
    env = {**os.environ, "PSYM_CACHE_DIR": str(tmp_path / "cache"), "PSYM_DEBUG": "0"}
    for argv, expect in cases:
        r = subprocess.run(
            [sys.executable, "-m", "psymetrics_core", *argv],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        err = r.stderr.strip()
        assert r.returncode == 1, f"{argv[0]}: exit {r.returncode}: {err[-1000:]}"
        assert "Traceback" not in err, err[-2000:]
        lines = [x for x in err.splitlines() if x.strip()]
        assert len(lines) == 1 and lines[0].startswith("psym: error: "), err[-1000:]
        assert expect in lines[0], lines[0]
        assert not Path(out).exists(), argv


def test_fuzz_residual_case_count() -> None:
    """The named cases of this file (issue 31's closing note)."""
    n = len(SCHEDULERS) + 2 + 2 + 5 + len(TAMPERED) + len(SHARD_SPECS) + 1 + len(PERSONAS)
    n += len(GENERATIONS)
    assert n >= 40, n
