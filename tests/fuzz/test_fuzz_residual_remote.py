"""Fuzz suite, the residual hostile inputs of issue 31 (item 10) that name a remote endpoint
(split from test_fuzz_residual.py, which counts these cases with its own):

- ``psym run PLAN --executor dask --scheduler ADDR`` with a malformed address (refused before
  Dask is asked) or a dead one (a closed loopback port: given up after ``SCHEDULER_WAIT``);
- ``psym batch submit`` (``study.batch.submit``) to a real loopback socket that accepts and
  never answers, with the default settings (given up after ``REPLY_WAIT`` seconds of silence,
  not the 120 s timeout).

Both waits are module constants read when the call is made: the tests check their documented
values (docs/reference/bounds.md) and then shorten them to 1 s, so the bound that ends the call
is shown at work without waiting 10 or 15 s for it.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest
from harness import expect_clean_error, run_cli, shared_session

from psymetrics_core.pluginsys.session import Session
from psymetrics_core.study.plan import PlanSettings, build_plan, read_plan, write_plan

KEY = "sk-FUZZSECRET0123456789"


@pytest.fixture(scope="module")
def session() -> Session:
    return shared_session()


@pytest.fixture(scope="module")
def plan_path(session: Session, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A valid plan (bfi, 2 items, 2 repeats = 2 units)."""
    path = tmp_path_factory.mktemp("plan") / "plan.jsonl"
    write_plan(build_plan(PlanSettings.of(tasks=("bfi",), limit=2, repeats=2), session), path)
    return path


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, read, closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- --executor dask --scheduler ----------------------------------------------------------------

SCHEDULERS: list[tuple[str, str, str]] = [
    ("no-port", "nonsense", "not a scheduler address"),
    ("url-no-port", "tcp://127.0.0.1", "not a scheduler address"),
    ("port-text", "tcp://127.0.0.1:abc", "the port is not a number"),
    ("port-zero", "tcp://127.0.0.1:0", "not in 1-65535"),
    ("port-99999", "tcp://127.0.0.1:99999", "not in 1-65535"),
    ("unknown-protocol", "gopher://127.0.0.1:8786", "unknown protocol"),
    ("empty", "", "not a scheduler address"),
    ("spaces", "   ", "not a scheduler address"),
]


@pytest.mark.parametrize("name, address, expect", SCHEDULERS, ids=[c[0] for c in SCHEDULERS])
def test_fuzz_dask_malformed_scheduler(
    plan_path: Path, tmp_path: Path, name: str, address: str, expect: str
) -> None:
    pytest.importorskip("distributed")
    argv = [
        "run",
        str(plan_path),
        "--executor",
        "dask",
        "--scheduler",
        address,
        "-o",
        str(tmp_path / "out"),
    ]
    out = expect_clean_error(lambda: run_cli(argv), ["--scheduler"], label=name)
    assert expect in out.message, out.message
    assert not (tmp_path / "out" / "results.json").exists()


def test_fuzz_dask_dead_scheduler(
    plan_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A closed loopback port: one line after SCHEDULER_WAIT (10 s), not Dask's 30 s OSError."""
    pytest.importorskip("distributed")
    from psymetrics_core.study import executor

    assert executor.SCHEDULER_WAIT == 10  # the documented bound (docs/reference/bounds.md)
    monkeypatch.setattr(executor, "SCHEDULER_WAIT", 1)  # read when the client is made
    address = f"tcp://127.0.0.1:{_closed_port()}"
    argv = [
        "run",
        str(plan_path),
        "--executor",
        "dask",
        "--scheduler",
        address,
        "-o",
        str(tmp_path / "out"),
    ]
    # within harness.WALL_BOUND (25 s): the 1 s bound ended it, not Dask's own 30 s
    out = expect_clean_error(lambda: run_cli(argv), [address], label="dead scheduler")
    assert "no Dask scheduler answered within 1 s" in out.message, out.message
    assert out.seconds >= 0.9, out.seconds  # it did wait for the scheduler


def test_fuzz_scheduler_without_dask_is_refused(plan_path: Path, tmp_path: Path) -> None:
    argv = [
        "run",
        str(plan_path),
        "--shards",
        "2",
        "--scheduler",
        "tcp://127.0.0.1:8786",
        "-o",
        str(tmp_path / "out"),
    ]
    out = expect_clean_error(lambda: run_cli(argv), ["--scheduler"])
    assert "--executor dask" in out.message


# -- psym batch submit to a server that never answers -------------------------------------------


class _Mute:
    """A real loopback socket that accepts connections and never reads nor answers; it closes
    them after ``hold`` seconds, so a client without a bound fails its case instead of hanging
    for ever."""

    def __init__(self, hold: float) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.hold = hold
        self.conns: list[socket.socket] = []
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            timer = threading.Timer(self.hold, conn.close)
            timer.daemon = True
            timer.start()

    def close(self) -> None:
        for c in self.conns:
            c.close()
        self.sock.close()


def test_fuzz_batch_submit_to_a_mute_server_with_the_defaults(
    session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --model-args timeout: the 120 s default would hang; the reply wait ends it."""
    from psymetrics_core.backends import openai_transfer
    from psymetrics_core.study.batch import submit

    # the documented bounds (docs/reference/bounds.md): 15 s of silence, far below the
    # backend's 120 s timeout; shortened to 1 s here (read when the call is made)
    assert openai_transfer.REPLY_WAIT == 15.0
    monkeypatch.setattr(openai_transfer, "REPLY_WAIT", 1.0)
    monkeypatch.setenv("PSYM_FUZZ_KEY", KEY)
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    srv = _Mute(hold=30)
    try:
        args = {"base_url": srv.base_url, "model": "m", "api_key_env": "PSYM_FUZZ_KEY"}
        settings = PlanSettings.of(tasks=("bfi",), model="openai-chat", model_args=args, limit=2)
        path = tmp_path / "plan.jsonl"
        write_plan(build_plan(settings, session), path)
        plan = read_plan(path)  # as `psym batch submit PLAN DIR` reads it, then submits
        assert plan.settings.model_args.get("timeout") is None  # the default timeout applies
        # within harness.WALL_BOUND (25 s): the reply wait ended it, not the 120 s timeout
        out = expect_clean_error(
            lambda: submit(plan, tmp_path / "b", session), ["/files"], label="mute server"
        )
    finally:
        srv.close()
    assert "sent nothing for 1 s" in out.message, out.message
    assert out.seconds >= 0.9, out.seconds  # it waited for the server, then gave up
    assert out.message.startswith("POST "), out.message
    assert KEY not in out.message and not (tmp_path / "b" / "batch.json").exists()
