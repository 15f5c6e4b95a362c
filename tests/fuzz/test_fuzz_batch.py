"""Fuzz suite, studies: hostile Batch API replies (``psym batch``).

Every case must end in one ``PsymError`` line naming the endpoint (or the file) and the field
where there is one (``harness.expect_clean_error``: no other exception, one line, within the time
and memory bounds). The Batch API server is a real loopback HTTP server in a thread, and the
hanging server a real socket that accepts and never answers. Split from test_fuzz_studies.py,
which counts its cases.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error, shared_session
from studies_shared import DEEP_ARRAY, KEY, json_edit, unblock

from psymetrics_core.pluginsys.session import Session
from psymetrics_core.study.plan import PlanSettings, build_plan, read_plan, write_plan


@pytest.fixture(scope="module")
def session() -> Session:
    return shared_session()


class BatchScript:
    """A loopback server with the Batch API's endpoints, each answered as scripted."""

    def __init__(self, replies: dict[str, tuple[int, bytes]]) -> None:
        self.replies = replies
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                key = next((k for k in owner.replies if k in self.path), None)
                status, body = owner.replies.get(key or "", (404, b'{"error": "no"}'))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer  # noqa: N815

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, on every exit
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _j(obj: Any) -> bytes:
    return json.dumps(obj).encode()


FILE_OK = (200, _j({"id": "file-1", "object": "file"}))
BATCH_OK = (200, _j({"id": "batch-1", "status": "validating"}))

# (name, replies by path, endpoint named, field named or "")
BATCH_CASES: list[tuple[str, dict[str, tuple[int, bytes]], str, str]] = [
    ("files-not-json", {"/files": (200, b"<html>")}, "POST /files", "not JSON"),
    ("files-list", {"/files": (200, b"[]")}, "POST /files", "not a JSON object"),
    ("files-nested-100k", {"/files": (200, DEEP_ARRAY.encode())}, "POST", "max_response"),
    ("files-no-id", {"/files": (200, _j({"object": "file"}))}, "POST /files", "field 'id'"),
    ("files-id-int", {"/files": (200, _j({"id": 7}))}, "POST /files", "field 'id'"),
    ("files-id-null", {"/files": (200, _j({"id": None}))}, "POST /files", "field 'id'"),
    (
        "files-id-path",
        {"/files": (200, _j({"id": "../../admin?x=1"}))},
        "POST /files",
        "field 'id'",
    ),
    ("files-id-huge", {"/files": (200, _j({"id": "f" * 500}))}, "POST /files", "field 'id'"),
    ("files-id-is-key", {"/files": (200, _j({"id": KEY}))}, "POST /files", "API key"),
    (
        "files-http-401-echo",
        {"/files": (401, _j({"error": {"message": f"bad key {KEY}"}}))},
        "/files",
        "HTTP 401",
    ),
    ("files-http-500", {"/files": (500, b"oops")}, "/files", "HTTP 500"),
    (
        "batches-not-json",
        {"/files": FILE_OK, "/batches": (200, b"nope")},
        "POST /batches",
        "not JSON",
    ),
    (
        "batches-no-id",
        {"/files": FILE_OK, "/batches": (200, _j({"status": "validating"}))},
        "POST /batches",
        "field 'id'",
    ),
    (
        "batches-no-status",
        {"/files": FILE_OK, "/batches": (200, _j({"id": "b1"}))},
        "POST /batches",
        "field 'status'",
    ),
    (
        "batches-status-int",
        {"/files": FILE_OK, "/batches": (200, _j({"id": "b", "status": 1}))},
        "POST /batches",
        "field 'status'",
    ),
    (
        "batches-status-is-key",
        {"/files": FILE_OK, "/batches": (200, _j({"id": "b", "status": KEY}))},
        "POST /batches",
        "field 'status'",
    ),
    (
        "batches-id-is-key",
        {"/files": FILE_OK, "/batches": (200, _j({"id": KEY, "status": "validating"}))},
        "POST /batches",
        "API key",
    ),
    (
        "batches-counts-string",
        {
            "/files": FILE_OK,
            "/batches": (
                200,
                _j({"id": "b", "status": "validating", "request_counts": {"total": "5"}}),
            ),
        },
        "POST /batches",
        "field 'request_counts.total'",
    ),
    (
        "batches-output-id-int",
        {
            "/files": FILE_OK,
            "/batches": (200, _j({"id": "b", "status": "completed", "output_file_id": 5})),
        },
        "POST /batches",
        "field 'output_file_id'",
    ),
    (
        "batches-over-max-bytes",
        {
            "/files": FILE_OK,
            "/batches": (200, _j({"id": "b", "status": "validating", "pad": "x" * 5000})),
        },
        "/batches",
        "max_response",
    ),
    ("batches-http-404", {"/files": FILE_OK}, "/batches", "HTTP 404"),
]


@pytest.fixture(scope="module")
def batch_session(session: Session) -> Session:
    return session


def _batch_plan(tmp_path: Path, session: Session, base_url: str, **extra: str) -> Any:
    args = {"base_url": base_url, "model": "m", "api_key_env": "PSYM_FUZZ_KEY", **extra}
    settings = PlanSettings.of(tasks=("bfi",), model="openai-chat", model_args=args, limit=2)
    path = tmp_path / "plan.jsonl"
    write_plan(build_plan(settings, session), path)
    return read_plan(path)


@pytest.mark.parametrize(
    "name, replies, endpoint, field", BATCH_CASES, ids=[c[0] for c in BATCH_CASES]
)
def test_fuzz_batch_replies(
    session: Session,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    replies: dict[str, tuple[int, bytes]],
    endpoint: str,
    field: str,
) -> None:
    from psymetrics_core.study.batch import submit

    monkeypatch.setenv("PSYM_FUZZ_KEY", KEY)
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    srv = BatchScript(replies)
    try:
        plan = _batch_plan(tmp_path, session, srv.base_url, max_response_bytes="1024")
        out = expect_clean_error(
            lambda: submit(plan, tmp_path / "b", session),
            [endpoint, endpoint.split()[-1]],
            label=name,
        )
    finally:
        srv.close()
    assert field in out.message, out.message
    assert KEY not in out.message, out.message
    assert not (tmp_path / "b" / "batch.json").exists()


STATUS_CASES: list[tuple[str, tuple[int, bytes], str]] = [
    ("status-no-status", (200, _j({"id": "b"})), "field 'status'"),
    ("status-unknown-status", (200, _j({"id": "b", "status": "done"})), "field 'status'"),
    ("status-id-list", (200, _j({"id": ["b"], "status": "completed"})), "field 'id'"),
    (
        "status-counts-list",
        (200, _j({"id": "b", "status": "completed", "request_counts": []})),
        "field 'request_counts'",
    ),
    ("status-not-json", (200, b"\xff\xfe"), "not JSON"),
    ("status-http-403-echo", (403, _j({"error": KEY})), "HTTP 403"),
]


def _state(directory: Path, url: str, **changes: Any) -> None:
    from psymetrics_core.study.batch import BatchState

    directory.mkdir(parents=True, exist_ok=True)
    BatchState(
        plan="a" * 64,
        base_url=url,
        api_key_env="PSYM_FUZZ_KEY",
        batch_id="b",
        input_file_id="f",
        requests=2,
        mode="generate",
    ).save(directory)
    if changes:
        json_edit("batch.json", lambda d: d.update(changes))(directory)


@pytest.mark.parametrize("name, reply, field", STATUS_CASES, ids=[c[0] for c in STATUS_CASES])
def test_fuzz_batch_status_replies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, reply: Any, field: str
) -> None:
    from psymetrics_core.study.batch import status

    monkeypatch.setenv("PSYM_FUZZ_KEY", KEY)
    srv = BatchScript({"/batches/": reply})
    try:
        _state(tmp_path / "b", srv.base_url)
        out = expect_clean_error(lambda: status(tmp_path / "b"), ["GET", "/batches/b"], label=name)
    finally:
        srv.close()
    assert field in out.message and KEY not in out.message, out.message


OUTPUT_CASES: list[tuple[str, bytes, str]] = [
    ("output-not-json", b"{nope\n", "line 1"),
    ("output-list", b"[1]\n", "line 1"),
    ("output-no-custom-id", _j({"response": {"status_code": 200}}) + b"\n", "field 'custom_id'"),
    ("output-custom-id-int", _j({"custom_id": 5}) + b"\n", "field 'custom_id'"),
    (
        "output-status-code-string",
        _j({"custom_id": "a" * 64, "response": {"status_code": "200"}}) + b"\n",
        "field 'response.status_code'",
    ),
    (
        "output-body-list",
        _j({"custom_id": "a", "response": {"status_code": 200, "body": []}}) + b"\n",
        "field 'response.body'",
    ),
    (
        "output-unknown-custom-id",
        _j({"custom_id": "zz", "response": None}) + b"\n",
        "not in the plan",
    ),
]


@pytest.mark.parametrize("name, content, field", OUTPUT_CASES, ids=[c[0] for c in OUTPUT_CASES])
def test_fuzz_batch_output_lines(
    session: Session,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    content: bytes,
    field: str,
) -> None:
    from psymetrics_core.study.batch import collect

    monkeypatch.setenv("PSYM_FUZZ_KEY", KEY)
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    done = _j({"id": "b", "status": "completed", "output_file_id": "out-1"})
    srv = BatchScript({"/files/out-1/content": (200, content), "/batches/b": (200, done)})
    try:
        plan = _batch_plan(tmp_path, session, srv.base_url)
        _state(tmp_path / "b", srv.base_url, plan=plan.hash)
        out = expect_clean_error(
            lambda: collect(plan, tmp_path / "b", session), ["/files/out-1/content"], label=name
        )
    finally:
        srv.close()
    assert field in out.message and KEY not in out.message, out.message


STATE_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("state-requests-string", {"requests": "2"}, "field 'requests'"),
    ("state-base-url-int", {"base_url": 5}, "field 'base_url'"),
    ("state-extra-field", {"surprise": 1}, "field 'surprise'"),
    ("state-batch-id-null", {"batch_id": None}, "field 'batch_id'"),
]


@pytest.mark.parametrize("name, changes, field", STATE_CASES, ids=[c[0] for c in STATE_CASES])
def test_fuzz_batch_state_file(tmp_path: Path, name: str, changes: Any, field: str) -> None:
    from psymetrics_core.study.batch import status

    _state(tmp_path / "b", "http://127.0.0.1:9/v1", **changes)
    out = expect_clean_error(lambda: status(tmp_path / "b"), ["batch.json"], label=name)
    assert field in out.message, out.message


@pytest.mark.parametrize("what", ["nested-100k", "fifo", "missing"])
def test_fuzz_batch_state_special(tmp_path: Path, what: str) -> None:
    from psymetrics_core.study.batch import status

    d = tmp_path / "b"
    d.mkdir()
    if what == "nested-100k":
        (d / "batch.json").write_text(DEEP_ARRAY)
    elif what == "fifo":
        os.mkfifo(d / "batch.json")
        unblock(d / "batch.json")
    out = expect_clean_error(lambda: status(d), ["batch.json"], label=what)
    assert {"nested-100k": "nested", "fifo": "FIFO", "missing": "not found"}[what] in out.message


class _Silent:
    """A real loopback socket that accepts connections and never reads nor answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
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
            # closed after 8 s, so a client without a timeout fails its case instead of hanging
            timer = threading.Timer(8.0, conn.close)
            timer.daemon = True
            timer.start()

    def close(self) -> None:
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.mark.parametrize("call", ["submit", "status"])
def test_fuzz_batch_silent_server_ends_within_the_timeout(
    session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    from psymetrics_core.study.batch import status, submit

    monkeypatch.setenv("PSYM_FUZZ_KEY", KEY)
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    srv = _Silent()
    try:
        if call == "submit":
            plan = _batch_plan(tmp_path, session, srv.base_url, timeout="0.5")
            fn: Callable[[], Any] = lambda: submit(plan, tmp_path / "b", session)  # noqa: E731
        else:
            _state(tmp_path / "b", srv.base_url)
            fn = lambda: status(tmp_path / "b", timeout=0.5)  # noqa: E731
        t0 = time.monotonic()
        out = expect_clean_error(fn, ["timeout"], label=call)
        assert time.monotonic() - t0 < 6, out.message
    finally:
        srv.close()


@pytest.mark.parametrize("task", ["moral-advice", "sct"])
def test_fuzz_batch_refuses_judged_tasks(
    session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task: str
) -> None:
    from psymetrics_core.study.batch import submit

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    srv = BatchScript({"/files": FILE_OK, "/batches": BATCH_OK})
    try:
        args = {"base_url": srv.base_url, "model": "m"}
        settings = PlanSettings.of(tasks=(task,), model="openai-chat", model_args=args, limit=1)
        plan = build_plan(settings, session)
        out = expect_clean_error(lambda: submit(plan, tmp_path / "b", session), [task])
    finally:
        srv.close()
    assert "judge" in out.message and not (tmp_path / "b" / "batch.json").exists()
