"""A plan under the Dask executor (local cluster, two worker processes) gives the results of a
single-process run; the OpenAI Batch API flow against a loopback batch server fills the
response cache so that running the plan afterwards makes no calls.

The commands run ``psym``'s ``main`` in this process (``tests/psym_inprocess.py``), each with
the cache directory a separate process would have; the Dask workers are real processes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from psym_inprocess import Ran, psym_main

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from benchmarks.batch_server import BatchServer  # noqa: E402
from benchmarks.latency_server import LatencyServer  # noqa: E402
from psymetrics_core.pluginsys.session import Session  # noqa: E402
from psymetrics_core.study.plan import PlanSettings, build_plan, write_plan  # noqa: E402


def _psym(args: list[str], cache: Path) -> Ran:
    return psym_main(args, cache=cache)


def _samples(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (directory / "samples.jsonl").read_text().splitlines()]


def _plan(tmp_path: Path, base_url: str, mode: str = "generate") -> Path:
    settings = PlanSettings.of(
        tasks=("bfi", "mfq"),
        model="openai-chat",
        model_args={"base_url": base_url, "model": "stub"},
        mode=mode,
        limit=4,
        conditions=("original", "reversed-options"),
    )
    path = tmp_path / f"plan-{mode}.jsonl"
    write_plan(build_plan(settings, Session()), path)
    return path


def test_dask_local_cluster_two_workers_equals_single_process(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    with LatencyServer(latency=0.0) as srv:
        plan = _plan(tmp_path, srv.base_url)
        r = _psym(["run", str(plan), "--output", str(tmp_path / "single")], tmp_path / "c1")
        assert r.returncode == 0, r.stderr
        before = srv.requests
        r = _psym(
            [
                "run",
                str(plan),
                "--executor",
                "dask",
                "--shards",
                "2",
                "--output",
                str(tmp_path / "dask"),
            ],
            tmp_path / "c2",
        )
        assert r.returncode == 0, r.stderr
        assert srv.requests - before == 4 * 4  # a fresh cache: the workers asked the server
    shards = sorted(p.name for p in (tmp_path / "dask" / "shards").iterdir())
    assert shards == ["1-of-2", "2-of-2"]
    for name in shards:  # both shards ran units
        assert json.loads((tmp_path / "dask" / "shards" / name / "shard.json").read_text())["units"]
    single = json.loads((tmp_path / "single" / "results.json").read_text())
    merged = json.loads((tmp_path / "dask" / "results.json").read_text())
    assert merged["tasks"] == single["tasks"]
    assert _samples(tmp_path / "dask") == _samples(tmp_path / "single")


@pytest.mark.parametrize("mode", ["generate", "logprob"])
def test_batch_submit_status_collect_then_run_makes_no_calls(tmp_path: Path, mode: str) -> None:
    with BatchServer(polls_before_done=1) as srv:
        plan = _plan(tmp_path, srv.base_url, mode)
        cache = tmp_path / "cache"
        bdir = tmp_path / "batch"
        r = _psym(["batch", "submit", str(plan), str(bdir)], cache)
        assert r.returncode == 0, r.stderr
        assert "16 requests" in r.stdout  # 2 tasks x 2 cells x 4 items
        assert len((bdir / "requests.jsonl").read_text().splitlines()) == 16
        r = _psym(["batch", "collect", str(plan), str(bdir)], cache)
        assert r.returncode == 1 and "in_progress, not completed" in r.stderr
        r = _psym(["batch", "status", str(bdir)], cache)
        assert r.returncode == 0 and "completed" in r.stdout, r.stdout + r.stderr
        r = _psym(["batch", "collect", str(plan), str(bdir)], cache)
        assert r.returncode == 0 and "stored 16 responses" in r.stdout, r.stdout + r.stderr
        assert srv.online_requests == 0
        r = _psym(["run", str(plan), "--output", str(tmp_path / "run")], cache)
        assert r.returncode == 0, r.stderr
        assert srv.online_requests == 0  # every answer came from the collected batch
        res = json.loads((tmp_path / "run" / "results.json").read_text())
        assert res["cache"] == {**res["cache"], "hits": 16, "misses": 0}
        # the same plan answered online gives the same samples
        r = _psym(["run", str(plan), "--output", str(tmp_path / "online")], tmp_path / "c2")
        assert r.returncode == 0, r.stderr
        assert srv.online_requests == 16
    assert _samples(tmp_path / "run") == _samples(tmp_path / "online")
    r = _psym(["batch", "submit", str(plan), str(tmp_path / "again")], cache)
    assert r.returncode == 1 and "already in the response cache" in r.stderr
