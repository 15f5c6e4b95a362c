"""Plan, shard, merge: a plan run as 2 shards (one killed with SIGKILL and resumed) and merged
equals a single-process ``evaluate`` of the same arguments, item by item; cache export/import.

The killed shard and one bad plan file are real ``psym`` processes; the other commands run
``psym``'s ``main`` in this process (``tests/psym_inprocess.py``), each with its own cache
directory as a separate machine would have."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from psym_inprocess import Ran, psym_main

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from benchmarks.latency_server import LatencyServer  # noqa: E402
from psymetrics_core.base.errors import PsymError  # noqa: E402
from psymetrics_core.pluginsys.session import Session  # noqa: E402
from psymetrics_core.study.plan import PlanSettings, build_plan, read_plan, write_plan  # noqa: E402

PSYM = [sys.executable, "-m", "psymetrics_core"]
EVAL_ARGS = dict(  # noqa: C408
    limit=5,
    conditions=("original", "reversed-options"),
    repeats=2,
    temperature=0.7,
)


def _psym(args: list[str], cache: Path) -> Ran:
    return psym_main(args, cache=cache)


def _process(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PSYM_CACHE_DIR": str(cache)}
    return subprocess.run(PSYM + args, env=env, capture_output=True, text=True)


def _samples(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (directory / "samples.jsonl").read_text().splitlines()]


def _plan(tmp_path: Path, base_url: str) -> Path:
    settings = PlanSettings.of(
        tasks=("bfi", "mfq"),
        model="openai-chat",
        model_args={"base_url": base_url, "model": "stub", "concurrency": "1"},
        **EVAL_ARGS,  # type: ignore[arg-type]
    )
    path = tmp_path / "plan.jsonl"
    write_plan(build_plan(settings, Session()), path)
    return path


def test_plan_lists_units_in_run_order_with_hashes(tmp_path: Path) -> None:
    plan = read_plan(_plan(tmp_path, "http://127.0.0.1:9/v1"))
    assert [(u.task, u.cell, u.repeat, u.seed) for u in plan.units[:4]] == [
        ("bfi", "original", 0, 1234),
        ("bfi", "original", 1, 1235),
        ("bfi", "reversed-options", 0, 1234),
        ("bfi", "reversed-options", 1, 1235),
    ]
    assert len(plan.units) == 8 and len({u.hash for u in plan.units}) == 8
    # shards partition the units
    one, two = plan.shard(1, 2), plan.shard(2, 2)
    assert sorted(u.index for u in one + two) == list(range(8)) and not set(one) & set(two)
    # the seed changes every unit's hash
    other = build_plan(
        PlanSettings.of(
            tasks=("bfi", "mfq"),
            model="openai-chat",
            model_args={"base_url": "http://127.0.0.1:9/v1", "model": "stub", "concurrency": "1"},
            **{**EVAL_ARGS, "seed": 1},  # type: ignore[arg-type]
        ),
        Session(),
    )
    assert not {u.hash for u in other.units} & {u.hash for u in plan.units}


def test_bad_plan_file_is_one_line_naming_the_line(tmp_path: Path) -> None:
    path = _plan(tmp_path, "http://127.0.0.1:9/v1")
    lines = path.read_text().splitlines()
    assert '"repeat": 0' in lines[3]  # line 4: unit 2 (bfi, reversed-options, repeat 0)
    lines[3] = lines[3].replace('"repeat": 0', '"repeat": 5')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(PsymError, match=r"plan\.jsonl, line 4, field 'hash'"):
        read_plan(path)
    path.write_text(lines[0] + "\n{not json\n")
    with pytest.raises(PsymError, match=r"plan\.jsonl, line 2: invalid JSON"):
        read_plan(path)
    r = _process(["run", str(path), "--output", str(tmp_path / "o")], tmp_path / "c")
    assert r.returncode == 1 and r.stderr.strip().count("\n") == 0
    assert "plan.jsonl, line 2: invalid JSON" in r.stderr and "Traceback" not in r.stderr


def test_secret_model_args_never_reach_a_plan(tmp_path: Path) -> None:
    settings = PlanSettings.of(tasks=("bfi",), model="openai-chat", model_args={"api_key": "sk-x"})
    with pytest.raises(PsymError, match="must not hold secrets"):
        build_plan(settings, Session())


def _cached(db: Path) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(db, timeout=30)
    try:
        return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # table not created yet
        return 0
    finally:
        con.close()


def _wait_for_responses(db: Path, n: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.time() + 300
    while proc.poll() is None and time.time() < deadline:
        if _cached(db) >= n:
            return
        time.sleep(0.05)


def test_two_shards_one_killed_and_resumed_merge_equals_single_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from psymetrics_core import evaluate

    with LatencyServer(latency=0.1) as srv:
        plan_path = _plan(tmp_path, srv.base_url)
        plan = read_plan(plan_path)
        cache_a, cache_b = tmp_path / "cache-a", tmp_path / "cache-b"  # two "machines"
        s1, s2 = tmp_path / "s1", tmp_path / "s2"
        n1 = 5 * len(plan.shard(1, 2))

        env = {**os.environ, "PSYM_CACHE_DIR": str(cache_a)}
        cmd = [*PSYM, "run", str(plan_path), "--shard", "1/2", "--output", str(s1)]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for_responses(cache_a / "responses.sqlite3", 3, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, "the shard finished before it was killed"
        srv.latency = 0.0  # it slowed the shard down so that the kill came half-way; no more
        assert not json.loads((s1 / "shard.json").read_text())["complete"]
        r = _psym(["merge", str(s1), "--output", str(tmp_path / "early")], cache_a)
        assert r.returncode == 1 and "incomplete" in r.stderr

        before = srv.requests
        r = _psym(["run", str(plan_path), "--shard", "1/2", "--output", str(s1)], cache_a)
        assert r.returncode == 0, r.stderr
        resumed = srv.requests - before
        assert 0 < resumed < n1  # finished requests came from the cache, not the server
        res1 = json.loads((s1 / "results.json").read_text())
        assert res1["cache"]["hits"] == n1 - resumed and res1["cache"]["misses"] == resumed

        r = _psym(["run", str(plan_path), "--shard", "2/2", "--output", str(s2)], cache_b)
        assert r.returncode == 0, r.stderr

        # only one shard: a unit is missing
        r = _psym(["merge", str(s1), "--output", str(tmp_path / "half")], cache_a)
        assert r.returncode == 1 and "in no shard" in r.stderr
        r = _psym(["merge", str(s2), str(s1), "--output", str(tmp_path / "merged")], cache_a)
        assert r.returncode == 0, r.stderr

        monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache-single"))
        requests_before = srv.requests
        single = evaluate(
            ["bfi", "mfq"],
            model="openai-chat",
            model_args=f"base_url={srv.base_url},model=stub,concurrency=1",
            output=tmp_path / "single",
            **EVAL_ARGS,  # type: ignore[arg-type]
        )
        assert srv.requests - requests_before == 5 * 8  # the single run really asked
    merged = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert merged["tasks"] == json.loads(json.dumps(single["tasks"]))
    assert merged["seeds"] == single["seeds"] and merged["conditions"] == single["conditions"]
    ours, theirs = _samples(tmp_path / "merged"), _samples(tmp_path / "single")
    assert len(ours) == len(theirs) == 5 * 8
    for a, b in zip(ours, theirs, strict=True):
        assert a == b
    assert {s["answer"] for s in ours} - {None}, "every answer unparsed: nothing compared"


def test_merge_refuses_disagreeing_versions(tmp_path: Path) -> None:
    with LatencyServer(latency=0.0) as srv:
        plan_path = _plan(tmp_path, srv.base_url)
        for i in (1, 2):
            r = _psym(
                ["run", str(plan_path), "--shard", f"{i}/2", "--output", str(tmp_path / f"s{i}")],
                tmp_path / "cache",
            )
            assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "s2" / "results.json").read_text())
    res["psymetrics"] = "0.0.1"
    (tmp_path / "s2" / "results.json").write_text(json.dumps(res))
    r = _psym(
        ["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--output", str(tmp_path / "m")],
        tmp_path / "cache",
    )
    assert r.returncode == 1 and "disagree on 'psymetrics'" in r.stderr
    r = _psym(
        ["merge", str(tmp_path / "s1"), str(tmp_path / "s1"), "--output", str(tmp_path / "m2")],
        tmp_path / "cache",
    )
    assert r.returncode == 1 and "more than one shard" in r.stderr


def test_cache_export_import_moves_responses(tmp_path: Path) -> None:
    with LatencyServer(latency=0.0) as srv:
        plan_path = _plan(tmp_path, srv.base_url)
        r = _psym(["run", str(plan_path), "--output", str(tmp_path / "a")], tmp_path / "ca")
        assert r.returncode == 0, r.stderr
        dump = tmp_path / "responses.jsonl.gz"
        r = _psym(["cache", "export", str(dump)], tmp_path / "ca")
        assert r.returncode == 0 and "exported 40 responses" in r.stdout, r.stdout + r.stderr
        r = _psym(["cache", "import", str(dump)], tmp_path / "cb")
        assert r.returncode == 0 and "imported 40 new" in r.stdout, r.stdout + r.stderr
        before = srv.requests
        r = _psym(["run", str(plan_path), "--output", str(tmp_path / "b")], tmp_path / "cb")
        assert r.returncode == 0, r.stderr
        assert srv.requests == before  # answered from the imported responses
    assert _samples(tmp_path / "a") == _samples(tmp_path / "b")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "x"}\n')
    r = _psym(["cache", "import", str(bad)], tmp_path / "cb")
    assert r.returncode == 1 and "bad.jsonl, line 1, field 'key'" in r.stderr, r.stderr


def test_plan_command_writes_the_plan_of_its_eval_options(tmp_path: Path) -> None:
    out = tmp_path / "cli.plan.jsonl"
    r = _psym(
        [
            "plan",
            "--tasks",
            "bfi,mfq",
            "--model",
            "openai-chat",
            "--model-args",
            "base_url=http://127.0.0.1:9/v1,model=stub,concurrency=1",
            "--limit",
            "5",
            "--condition",
            "original",
            "--condition",
            "reversed-options",
            "--repeats",
            "2",
            "--temperature",
            "0.7",
            "--output",
            str(out),
        ],
        tmp_path / "c",
    )
    assert r.returncode == 0, r.stderr
    assert "8 units" in r.stdout
    ours = read_plan(out)
    assert ours.hash == read_plan(_plan(tmp_path, "http://127.0.0.1:9/v1")).hash
    r = _psym(["plan", "--tasks", "nosuch", "--output", str(tmp_path / "x.jsonl")], tmp_path / "c")
    assert r.returncode == 1 and "nosuch" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x.jsonl").exists()
