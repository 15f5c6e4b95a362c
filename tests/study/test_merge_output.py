"""``psym merge`` claims its output like ``psym eval`` (rundir.claim_run_dir), and ``psym cache
export`` never shares a temporary file with another writer.

Shards are ``psym run --shard i/2`` against the loopback OpenAI-compatible latency server of
``benchmarks/``; the commands run ``psym``'s ``main`` in this process (``tests/psym_inprocess.py``)
except the exports racing each other, which are real ``psym`` processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from psym_inprocess import Ran, psym_main

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from benchmarks.latency_server import LatencyServer  # noqa: E402
from psymetrics_core.base.errors import PsymError  # noqa: E402
from psymetrics_core.pluginsys.session import Session  # noqa: E402
from psymetrics_core.study.merge import _stage_settings  # noqa: E402
from psymetrics_core.study.plan import PlanSettings, build_plan, write_plan  # noqa: E402

PSYM = [sys.executable, "-m", "psymetrics_core"]


def _psym(args: list[str], cache: Path) -> Ran:
    return psym_main(args, cache=cache)


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("shards")
    with LatencyServer(latency=0.0) as srv:
        settings = PlanSettings.of(
            tasks=("bfi",),
            model="openai-chat",
            model_args={"base_url": srv.base_url, "model": "stub", "concurrency": "1"},
            limit=4,
            conditions=("original", "reversed-options"),
        )
        plan = root / "plan.jsonl"
        write_plan(build_plan(settings, Session()), plan)
        dirs = []
        for i in (1, 2):
            out = root / f"s{i}"
            r = _psym(["run", str(plan), "--shard", f"{i}/2", "--output", str(out)], root / "c")
            assert r.returncode == 0, r.stderr
            dirs.append(out)
    return {"dirs": dirs, "cache": root / "c"}


def _one_line(r: Ran) -> str:
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def test_merge_refuses_an_existing_run_unless_overwrite(shards: dict[str, Any], tmp_path: Path):
    s1, s2 = (str(d) for d in shards["dirs"])
    out = tmp_path / "merged"
    r = _psym(["merge", s1, s2, "--output", str(out)], shards["cache"])
    assert r.returncode == 0, r.stderr
    first = json.loads((out / "results.json").read_text())
    assert len(first["tasks"]["bfi"]["runs"]) == 2  # both conditions, one from each shard
    (out / "results.json").write_text(json.dumps({**first, "marker": "older run"}))
    line = _one_line(_psym(["merge", s1, s2, "--output", str(out)], shards["cache"]))
    assert "already holds a run" in line and "--overwrite" in line
    assert json.loads((out / "results.json").read_text())["marker"] == "older run"  # untouched
    r = _psym(["merge", s1, s2, "--output", str(out), "--overwrite"], shards["cache"])
    assert r.returncode == 0, r.stderr
    again = json.loads((out / "results.json").read_text())
    assert "marker" not in again and again["tasks"] == first["tasks"]


def test_merge_into_a_directory_another_process_writes_is_refused(
    shards: dict[str, Any], tmp_path: Path
) -> None:
    from psymetrics_core.records.rundir import claim_run_dir

    out = tmp_path / "busy"
    # another writer (here: a claim held by this test process, e.g. a `psym eval` in progress)
    with claim_run_dir(out):
        line = _one_line(
            _psym(["merge", *map(str, shards["dirs"]), "--output", str(out)], shards["cache"])
        )
        assert "is in use by another psym run" in line and f"pid {os.getpid()}" in line
        assert not (out / "results.json").exists()
    # and the library call refuses it while another thread holds it
    from psymetrics_core.study.merge import merge_runs

    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with claim_run_dir(out):
            held.set()
            release.wait(60)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert held.wait(60)
        with pytest.raises(PsymError, match="in use by another psym run"):
            merge_runs(shards["dirs"], out, Session())
    finally:
        release.set()
        t.join()
    merge_runs(shards["dirs"], out, Session())  # free again
    assert (out / "results.json").is_file()


def test_merge_output_cannot_be_a_shard(shards: dict[str, Any]) -> None:
    s1, s2 = (str(d) for d in shards["dirs"])
    line = _one_line(_psym(["merge", s1, s2, "--output", s1, "--overwrite"], shards["cache"]))
    assert "is one of the shard directories" in line
    assert (Path(s1) / "results.json").is_file() and (Path(s1) / "shard.json").is_file()


def test_cache_export_leaves_another_writers_temporary_file_alone(
    shards: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "responses.jsonl"
    other = tmp_path / "responses.jsonl.tmp"  # the name every export used to share
    other.write_text("another export, half written\n")
    r = _psym(["cache", "export", str(out)], shards["cache"])
    assert r.returncode == 0, r.stderr
    assert other.read_text() == "another export, half written\n"
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows and all(len(row["key"]) == 64 for row in rows)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [other.name, out.name]
    )  # no leftovers
    # two exports at once: each renames its own complete file, the result is one of them whole
    procs = [
        subprocess.Popen(
            PSYM + ["cache", "export", str(out)],
            env={**os.environ, "PSYM_CACHE_DIR": str(shards["cache"])},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(3)
    ]
    for p in procs:
        assert p.wait(300) == 0, p.stderr.read() if p.stderr else ""
        for fh in (p.stdout, p.stderr):
            if fh:
                fh.close()
    assert [json.loads(x) for x in out.read_text().splitlines()] == rows
    # and the file imports into a fresh cache: every response, then none new
    r = _psym(["cache", "import", str(out)], tmp_path / "fresh")
    assert r.returncode == 0 and f"imported {len(rows)} new responses" in r.stdout, r.stderr
    r = _psym(["cache", "import", str(out)], tmp_path / "fresh")
    assert "imported 0 new responses" in r.stdout, r.stderr


def _deep(n: int) -> str:
    return "[" * n + "]" * n


@pytest.mark.parametrize(
    "fname, edit, expect",
    [
        ("results.json", lambda t: t[: len(t) // 2], "invalid JSON"),
        ("results.json", lambda t: b"\xff" + t.encode(), "not UTF-8"),
        (
            "results.json",
            lambda t: t.replace('"runs": [', '"runs": "x", "was": [', 1),
            "field 'tasks.bfi.runs'",
        ),
        ("results.json", lambda t: _deep(100_000), "results"),
        ("samples.jsonl", lambda t: t + "{not json\n", "invalid JSON"),
        ("samples.jsonl", lambda t: t + '{"task": "bfi", "condition": "original"}\n', "field '"),
        (
            "samples.jsonl",
            lambda t: t + '{"task": "bfi", "condition": "x", "repeat": "1e999"}\n',
            "field '",
        ),
        ("samples.jsonl", lambda t: t.encode() + b'{"task": "\xe9"}\n', "not UTF-8"),
        ("samples.jsonl", lambda t: t + _deep(100_000) + "\n", "samples.jsonl, line"),
        ("judge.jsonl", lambda t: b"\xff\xfe", "not UTF-8"),
    ],
)
def test_a_damaged_shard_file_is_one_line(
    shards: dict[str, Any], tmp_path: Path, fname: str, edit: Any, expect: str
) -> None:
    """Merge reads shard files through the validated readers: junk is one line naming the
    file, never a traceback, and nothing is written."""
    import shutil

    s1, s2 = (tmp_path / "s1", tmp_path / "s2")
    shutil.copytree(shards["dirs"][0], s1)
    shutil.copytree(shards["dirs"][1], s2)
    target = s1 / fname
    damaged = edit(target.read_text() if target.exists() else "")
    if isinstance(damaged, bytes):
        target.write_bytes(damaged)
    else:
        target.write_text(damaged)
    out = tmp_path / "merged"
    line = _one_line(_psym(["merge", str(s1), str(s2), "--output", str(out)], shards["cache"]))
    assert str(target) in line and expect in line, line
    assert not (out / "results.json").exists()


def test_merged_judge_stage_settings_keep_every_shards_reply_lengths() -> None:
    # two shards' judges asked option conversion for different lengths (their batches
    # differed): the merged record names both, a malformed length list counts as none
    a = {"stage_settings": {"option-conversion": {"mode": "generate", "max_new_tokens": [248]}}}
    b = {"stage_settings": {"option-conversion": {"mode": "generate", "max_new_tokens": [140]}}}
    c = {"stage_settings": {"option-conversion": {"max_new_tokens": "many"}, "x": 3}}
    merged = _stage_settings([a, b, c])
    assert merged == {"option-conversion": {"mode": "generate", "max_new_tokens": [140, 248]}}
