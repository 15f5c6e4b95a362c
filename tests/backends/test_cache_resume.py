"""Crash safety: a run killed with SIGKILL and restarted repeats none of its finished requests
and gives the same results; a cached re-run of the real model makes no model calls."""

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

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from benchmarks.latency_server import LatencyServer  # noqa: E402
from psymetrics_core import evaluate  # noqa: E402

N = 20


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


def _answers(out: Path) -> list[tuple[str, Any]]:
    lines = (out / "samples.jsonl").read_text().splitlines()
    return [(json.loads(x)["item"], json.loads(x)["answer"]) for x in lines]


def test_sigkill_then_restart_repeats_no_finished_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    db = tmp_path / "cache" / "responses.sqlite3"
    with LatencyServer(latency=0.25) as srv:
        args = f"base_url={srv.base_url},model=stub,concurrency=1"
        cmd = [sys.executable, "-m", "psymetrics_core", "eval", "--tasks", "bfi"]
        cmd += ["--limit", str(N), "--model", "openai-chat", "--model-args", args]
        proc = subprocess.Popen(
            [*cmd, "--output", str(tmp_path / "killed")],
            env={**os.environ},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 300
        while _cached(db) < 5 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done = _cached(db)
        assert 5 <= done < N, f"the run was not killed half-way ({done} of {N} cached)"
        srv.latency = 0.0  # the latency only let the kill land half-way; nothing else waits

        before = srv.requests
        resumed = evaluate(
            ["bfi"],
            model="openai-chat",
            model_args=args,
            limit=N,
            output=tmp_path / "resumed",
        )
        assert srv.requests - before == N - done  # finished requests are not repeated
        assert resumed["cache"]["hits"] == done and resumed["cache"]["misses"] == N - done

        before = srv.requests
        fresh = evaluate(
            ["bfi"],
            model="openai-chat",
            model_args=args,
            limit=N,
            output=tmp_path / "fresh",
            cache=False,
        )
        assert srv.requests - before == N and fresh["cache"] is None
    assert resumed["tasks"]["bfi"]["scales"] == fresh["tasks"]["bfi"]["scales"]
    assert _answers(tmp_path / "resumed") == _answers(tmp_path / "fresh")


class CountingBackend:
    """A real backend that counts the prompts it is asked to score."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def option_logprobs(self, prompts: Any, settings: Any, progress: Any = None, **kw: Any) -> Any:
        self.calls += len(prompts)
        return self.inner.option_logprobs(prompts, settings, progress, **kw)

    def generate(self, prompts: Any, settings: Any, progress: Any = None, **kw: Any) -> Any:
        self.calls += len(prompts)
        return self.inner.generate(prompts, settings, progress, **kw)


@pytest.mark.model
def test_cached_rerun_makes_no_model_calls(
    smollm2: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the scoring engine from the session's model copy and graphs, before the cache directory
    # moves (else a first load here converts the GGUF file again: 90 s instead of 1 s)
    smollm2._native_engine()
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    counting = CountingBackend(smollm2)
    runs = []
    for name in ("first", "second"):
        runs.append(
            evaluate(
                ["bfi"],
                backend=counting,
                cache=True,
                mode="logprob",
                limit=6,
                output=tmp_path / name,
            )
        )
        if name == "first":
            assert counting.calls == 6
    assert counting.calls == 6  # the second run was served entirely from the cache
    assert runs[1]["cache"]["hits"] == 6 and runs[1]["cache"]["misses"] == 0
    assert runs[0]["tasks"] == runs[1]["tasks"]
    assert (tmp_path / "first" / "samples.jsonl").read_text() == (
        tmp_path / "second" / "samples.jsonl"
    ).read_text()
