"""Issue 14: run directories (lock, refuse, --overwrite/--resume, no empty leftovers), output and
cache paths that cannot work, disk full, and paying once when runs share the response cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from benchmarks.latency_server import LatencyServer  # noqa: E402
from psymetrics_core.base.errors import PsymError  # noqa: E402
from psymetrics_core.cli import main  # noqa: E402
from psymetrics_core.records.rundir import claim_run_dir  # noqa: E402


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
        raise SystemExit(0)
    err = capsys.readouterr().err
    return int(info.value.code or 0), err


def test_existing_run_is_refused_unless_overwrite_or_resume(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with claim_run_dir(run):
        (run / "results.json").write_text("{}")
    with pytest.raises(PsymError, match="already holds a run; pass --overwrite"):
        with claim_run_dir(run):
            pass
    assert (run / "results.json").read_text() == "{}"  # untouched
    with claim_run_dir(run, resume=True):
        assert (run / "results.json").exists()  # resume keeps it until the run rewrites it
    with claim_run_dir(run, overwrite=True):
        assert not (run / "results.json").exists()


def test_second_run_on_the_same_output_stops_at_once(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with claim_run_dir(run):
        with pytest.raises(PsymError, match=f"in use by another psym run \\(pid {os.getpid()}\\)"):
            with claim_run_dir(run, overwrite=True):
                pass
    with claim_run_dir(run, overwrite=True):  # released afterwards
        pass


def test_failed_run_leaves_no_empty_directory(tmp_path: Path) -> None:
    run = tmp_path / "a" / "b"
    with pytest.raises(RuntimeError):
        with claim_run_dir(run):
            (run / "samples.jsonl").write_text("")
            raise RuntimeError("model failed")
    assert not run.exists()
    kept = tmp_path / "kept"
    with pytest.raises(RuntimeError):
        with claim_run_dir(kept):
            (kept / "samples.jsonl").write_text('{"item": 1}\n')  # paid-for samples stay
            raise RuntimeError("model failed")
    assert (kept / "samples.jsonl").exists()


def test_output_paths_that_cannot_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    rdir = tmp_path / "run"
    (rdir / "results.json").mkdir(parents=True)
    for out, message in [
        (afile / "sub", "is under"),
        (rdir, "results.json exists and is not a file"),
    ]:
        code, err = _cli(["eval", "--tasks", "bfi", "--output", str(out)], capsys)
        assert code == 1 and message in err and err.count("\n") == 1, err


def _readonly_dir(tmp_path: Path) -> Path | None:
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() != 0:
        ro.chmod(0o500)
        return ro
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)], capture_output=True
    )
    return ro if r.returncode == 0 else None


def test_read_only_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ro = _readonly_dir(tmp_path)
    if ro is None:
        pytest.skip("cannot make a read-only folder here (root without mount)")
    try:
        code, err = _cli(["eval", "--tasks", "bfi", "--output", str(ro / "run")], capsys)
        assert code == 1 and "not writable" in err and err.count("\n") == 1, err
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(ro)], capture_output=True)
        else:
            ro.chmod(0o700)


def test_cache_dir_that_is_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "cachefile"
    f.write_text("x")
    monkeypatch.setenv("PSYM_CACHE_DIR", str(f))
    code, err = _cli(["cache", "info"], capsys)
    assert code == 1 and "response cache" in err and err.count("\n") == 1, err


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Any:
    """A 256 KiB tmpfs (root) or None."""
    d = tmp_path / "tiny"
    d.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        yield None
        return
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(d)], capture_output=True
    )
    if r.returncode != 0:
        yield None
        return
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], capture_output=True)


def test_disk_full_cache_and_results(tiny_disk: Path | None, tmp_path: Path) -> None:
    from psymetrics_core.backends.cache import ResponseCache
    from psymetrics_core.base.types import Completion
    from psymetrics_core.records.writer import write_results

    if tiny_disk is None:
        pytest.skip("needs root to mount a tiny tmpfs")
    cache = ResponseCache(tiny_disk / "c" / "responses.sqlite3")
    with pytest.raises(PsymError, match="cannot store a response .*full") as info:
        for i in range(10_000):
            cache.put(f"k{i}", "m", "generate", Completion(text="x" * 2000))
    assert "\n" not in str(info.value)
    with pytest.raises(PsymError, match="cannot write results"):
        write_results(tiny_disk / "results.json", {"big": "y" * 1_000_000}, validate=False)
    assert not list(tiny_disk.glob(".results.json*"))  # no partial temporary file left


def test_cache_info_shows_and_clear_removes_leftover_conversion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = tmp_path / "models" / f"abcd.tmp{dead.pid}"
    left.mkdir(parents=True)
    (left / "model.safetensors").write_bytes(b"0" * 2_000_000)
    alive = tmp_path / "models" / f"efgh.tmp{os.getpid()}"  # a conversion in progress
    alive.mkdir()
    from click.testing import CliRunner

    from psymetrics_core.cli import cli

    # the console wraps long paths (a pytest-xdist worker's tmp path is longer): unwrap
    out = CliRunner().invoke(cli, ["cache", "info"]).output.replace("\n", "")
    assert "leftover model conversion" in out and "abcd.tmp" in out and "2.0 MB" in out
    assert "efgh" not in out
    CliRunner().invoke(cli, ["cache", "clear", "--yes"])
    assert not left.exists() and alive.exists()


def _run(url: str, limit: int, out: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    args = f"base_url={url},model=stub,concurrency=3"
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "psymetrics_core",
            "eval",
            "--tasks",
            "bfi",
            "--limit",
            str(limit),
            "--model",
            "openai-chat",
            "--model-args",
            args,
            "--output",
            str(out),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_four_concurrent_runs_pay_each_request_once(tmp_path: Path) -> None:
    """Four runs sharing one cache, overlapping on their first 20 items: every distinct request
    reaches the server exactly once (counted at the server)."""
    env = {**os.environ, "PSYM_CACHE_DIR": str(tmp_path / "cache")}
    with LatencyServer(latency=0.15) as srv:
        procs = [_run(srv.base_url, n, tmp_path / f"run{n}", env) for n in (20, 24, 28, 32)]
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
        bodies = Counter(json.dumps(b, sort_keys=True) for b in srv.bodies)
    assert len(bodies) == 32  # bfi items 1..32
    assert max(bodies.values()) == 1, [n for n in bodies.values() if n > 1]
    assert srv.requests == 32
    answers = {}
    for n in (20, 24, 28, 32):
        for line in (tmp_path / f"run{n}" / "samples.jsonl").read_text().splitlines():
            rec = json.loads(line)
            answers.setdefault(rec["item"], set()).add(rec["completion"])
    assert all(len(v) == 1 for v in answers.values())  # every run saw the same responses


def test_waiting_run_takes_over_a_dead_runs_lease(tmp_path: Path) -> None:
    from psymetrics_core.backends.cache import ResponseCache

    db = tmp_path / "responses.sqlite3"
    code = (
        "import sys; from psymetrics_core.backends.cache import ResponseCache;"
        f"c = ResponseCache(__import__('pathlib').Path({str(db)!r})); print(c.lease(['k1','k2']))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "['k1', 'k2']" in r.stdout, r.stderr  # leased by a process that has now exited
    cache = ResponseCache(db)
    t0 = time.monotonic()
    assert cache.lease(["k1", "k2"]) == (["k1", "k2"], [])
    assert time.monotonic() - t0 < 5


def test_cli_refuses_then_resumes_and_overwrites_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real `psym eval` against a loopback server: a second run into the same --output is
    refused; --resume repeats it from the cache (no request paid again); --overwrite replaces it."""
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    with LatencyServer(latency=0.0) as srv:
        args = f"base_url={srv.base_url},model=stub"
        base = [
            "eval",
            "--tasks",
            "bfi",
            "--limit",
            "4",
            "--model",
            "openai-chat",
            "--model-args",
            args,
            "--output",
            str(out),
        ]
        assert _cli(base, capsys)[0] == 0
        first = (out / "results.json").read_text()
        assert srv.requests == 4
        code, err = _cli(base, capsys)
        assert code == 1 and "already holds a run" in err and err.count("\n") == 1
        assert (out / "results.json").read_text() == first  # untouched
        assert _cli([*base, "--resume"], capsys)[0] == 0
        assert srv.requests == 4  # every response came from the cache
        assert json.loads((out / "results.json").read_text())["cache"]["hits"] == 4
        assert _cli([*base, "--overwrite", "--no-cache"], capsys)[0] == 0
        assert srv.requests == 8


def test_two_processes_on_one_output_one_refused(tmp_path: Path) -> None:
    """Two `psym eval` processes started together on the same --output: exactly one runs and
    writes consistent records; the other exits 1 with one line, having written nothing."""
    env = {**os.environ, "PSYM_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "shared"
    with LatencyServer(latency=0.6) as srv:  # the run lasts ~2.4 s: both start within it
        procs = [_run(srv.base_url, 12, out, env) for _ in range(2)]
        results = [(p.wait(timeout=300), p.communicate()[1]) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 1], results
    err = next(e for code, e in results if code == 1)
    assert "in use by another psym run" in err
    lines = (out / "samples.jsonl").read_text().splitlines()
    assert [json.loads(x)["item"] for x in lines] == [str(i) for i in range(1, 13)]
    assert json.loads((out / "results.json").read_text())["tasks"]["bfi"]["n_items"] == 12
