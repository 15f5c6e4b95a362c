"""Studies through the real command line: secrets inside ``base_url`` reach no file, special
files are refused before they are opened, ``psym batch submit`` against a server that accepts and
never answers ends within the timeout, a damaged shard pair ends ``psym merge`` in one line, and
``psym cache import`` stores nothing from a damaged file and everything from a long good one.

Servers are real loopback sockets in threads (``tests/hostile_server.py``, a bare accepting
socket); every command gets its own cache directory under ``tmp_path``. Where the process is the
subject (a FIFO must not block it, a silent server must not hang it) the command is a real
``psym`` process; elsewhere it is ``psym``'s ``main`` in this process (``tests/psym_inprocess.py``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hostile_server import HostileServer, Reply, chat_ok
from psym_inprocess import Ran, psym_main

PSYM = [sys.executable, "-m", "psymetrics_core"]
KEY = "sk-STUDYSECRET0123456789"


def _psym(
    args: list[str], tmp_path: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PSYM_CACHE_DIR": str(tmp_path / "cache"), "PSYM_TEST_KEY": KEY}
    return subprocess.run(
        PSYM + args, env=env, capture_output=True, text=True, timeout=timeout, cwd=tmp_path
    )


def _main(args: list[str], tmp_path: Path) -> Ran:
    env = {"PSYM_TEST_KEY": KEY}
    return psym_main(args, cache=tmp_path / "cache", env=env, cwd=tmp_path)


def _one_line(r: subprocess.CompletedProcess[str] | Ran) -> str:
    assert r.returncode == 1, r.stdout + r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("psym: error:"), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


def _files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.parametrize(
    "url_of",
    [
        lambda base: base.replace("http://", f"http://user:{KEY}@"),
        lambda base: f"{base}?key={KEY}",
        lambda base: f"{base}?x=1&api_key={KEY}",
    ],
    ids=["userinfo", "query-key", "query-api-key"],
)
def test_a_key_in_base_url_reaches_no_file(tmp_path: Path, url_of: Any) -> None:
    """`psym eval` (results, samples, provenance, cache) and `psym plan` never write the key."""
    with HostileServer(lambda n, req: Reply(body=chat_ok("3"))) as srv:
        url = url_of(srv.base_url)
        r = _main(
            [
                "eval",
                "--tasks",
                "bfi",
                "--limit",
                "2",
                "--model",
                "openai-chat",
                "--model-args",
                f"base_url={url},model=m",
                "--output",
                str(tmp_path / "run"),
            ],
            tmp_path,
        )
        assert r.returncode == 0, r.stderr
        assert json.loads((tmp_path / "run" / "results.json").read_text())["provenance"]
        plan = tmp_path / "study.plan.jsonl"
        r2 = _main(
            [
                "plan",
                "--tasks",
                "bfi",
                "--limit",
                "2",
                "--model",
                "openai-chat",
                "--model-args",
                f"base_url={url},model=m",
                "--output",
                str(plan),
            ],
            tmp_path,
        )
    assert "base_url" in _one_line(r2) and not plan.exists()
    assert _files_holding(tmp_path, KEY) == []
    assert KEY not in r.stdout + r.stderr + r2.stdout + r2.stderr


@pytest.mark.parametrize("command", [["run", "{p}", "--output", "out"], ["cache", "import", "{p}"]])
def test_a_fifo_is_refused_unopened(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / "input.jsonl"
    os.mkfifo(fifo)
    r = _psym([a.format(p=fifo) for a in command], tmp_path, timeout=60)
    assert "FIFO" in _one_line(r) and str(fifo) in r.stderr


def test_batch_submit_to_a_server_that_never_answers_ends_within_the_timeout(
    tmp_path: Path,
) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(sock.accept()[0])  # accepted, never read, never answered
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    try:
        plan = tmp_path / "p.jsonl"
        r = _main(
            [
                "plan",
                "--tasks",
                "bfi",
                "--limit",
                "2",
                "--model",
                "openai-chat",
                "--model-args",
                f"base_url={url},model=m,timeout=1,api_key_env=PSYM_TEST_KEY",
                "--output",
                str(plan),
            ],
            tmp_path,
        )
        assert r.returncode == 0, r.stderr
        t0 = time.monotonic()
        r = _psym(["batch", "submit", str(plan), str(tmp_path / "b")], tmp_path, timeout=60)
        took = time.monotonic() - t0
        line = _one_line(r)
        assert "POST" in line and "/files" in line and "1 s timeout" in line
        assert took < 1 + 15, took  # the timeout plus interpreter start-up and plan rendering
        r = _main(["batch", "status", str(tmp_path / "b")], tmp_path)
        assert "not found" in _one_line(r)  # nothing was recorded
    finally:
        for c in held:
            c.close()
        sock.close()
    assert not (tmp_path / "b" / "batch.json").exists()
    assert KEY not in r.stderr


def test_merge_of_two_damaged_shards_is_one_line(tmp_path: Path) -> None:
    from psymetrics_core.pluginsys.session import Session
    from psymetrics_core.study.plan import PlanSettings, build_plan, write_plan

    plan = tmp_path / "p.jsonl"
    write_plan(build_plan(PlanSettings.of(tasks=("bfi",), limit=2, repeats=2), Session()), plan)
    for i, record in (
        (1, {"plan": 5, "shard": "1/2", "units": None, "complete": "yes"}),
        (2, {"shard": [2, 2]}),
    ):
        d = tmp_path / f"s{i}"
        d.mkdir()
        (d / "shard.json").write_text(json.dumps(record))
        (d / "plan.jsonl").write_bytes(plan.read_bytes())
    r = _main(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--output", "m"], tmp_path)
    line = _one_line(r)
    assert "s1/shard.json, field 'plan'" in line
    assert not (tmp_path / "m" / "results.json").exists()


def _line(i: int) -> str:
    return json.dumps(
        {
            "key": f"{i:064x}",
            "model": "m",
            "mode": "generate",
            "created": 1.0,
            "response": json.dumps({"text": str(i), "option_logprobs": None, "meta": {}}),
        }
    )


def test_cache_import_is_all_or_nothing_and_streams_long_files(tmp_path: Path) -> None:
    from psymetrics_core.backends.cache import ResponseCache
    from psymetrics_core.backends.cache_transfer import import_cache
    from psymetrics_core.base.errors import PsymError

    good = [_line(i) for i in range(12_345)]  # more than two storing chunks
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*good[:6000], '{"key": 1}', *good[6000:]]) + "\n")
    cache = ResponseCache(tmp_path / "c.sqlite")
    try:
        with pytest.raises(PsymError, match=r"bad\.jsonl, line 6001, field 'key'"):
            import_cache(cache, bad)
        assert cache.stats().entries == 0  # checked before anything is stored
        ok = tmp_path / "ok.jsonl"
        ok.write_text("\n".join(good) + "\n\n")
        assert import_cache(cache, ok) == (12_345, 12_345)
        assert import_cache(cache, ok) == (12_345, 0)  # again: nothing new
        assert cache.get_many([f"{7:064x}"])[f"{7:064x}"].text == "7"
    finally:
        cache.close()
