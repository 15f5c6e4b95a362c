"""The plugin guide's worked example of an HTTP backend (docs/plugins/examples/anthropic_backend.py,
quoted by docs/plugins/http-backend.md), run as written against a loopback server speaking the
Anthropic Messages shape: ``POST /v1/messages`` with an ``x-api-key`` header, replies
``{"content": [{"type": "text", "text": ...}], "stop_reason": ..., "usage": {...}}``.

A fake key only: it must never reach the output files, the response cache or an error message
(the server echoes it back in a refusal); 429/5xx are retried; the deadline holds.
"""

from __future__ import annotations

import importlib.util
import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from psymetrics_core import HTTPBackend
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import Option, Prompt
from psymetrics_core.pluginsys.session import Session

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "plugins" / "examples" / "anthropic_backend.py"
PAGE = REPO / "docs" / "plugins" / "http-backend.md"
KEY = "sk-ant-test-0123456789abcdef"  # fake: the loopback server accepts only this one


class MessagesServer:
    """A loopback Anthropic-Messages-shaped server: answers "3" (model "refused": HTTP 401
    echoing the key it received); ``fail`` statuses are answered first, one per request;
    ``delay`` seconds before each reply."""

    def __init__(self, fail: list[int] | None = None, delay: float = 0.0) -> None:
        self.fail = list(fail or [])
        self.delay = delay
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 -- http.server's name
                owner.handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers["Content-Length"])))
        with self.lock:
            self.bodies.append(body)
            self.headers.append(dict(h.headers))
            status = self.fail.pop(0) if self.fail else 200
        time.sleep(self.delay)
        reply: dict[str, Any]
        if h.path != "/v1/messages" or h.headers.get("anthropic-version") != "2023-06-01":
            status, reply = 404, {"type": "error", "error": {"message": f"no route {h.path}"}}
        elif body["model"] == "refused" or h.headers.get("x-api-key") != KEY:
            said = h.headers.get("x-api-key")
            status, reply = 401, {"type": "error", "error": {"message": f"invalid key {said}"}}
        elif status != 200:
            reply = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
        else:
            reply = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": "3"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 1},
            }
        data = json.dumps(reply).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        if status == 429:
            h.send_header("Retry-After", "0")
        h.end_headers()
        try:
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # a client past its deadline left
            pass

    def __enter__(self) -> MessagesServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("anthropic_backend_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    yield _example()


def _backend(example: ModuleType, srv: MessagesServer, **extra: str) -> Any:
    args = {"base_url": srv.base_url, "model": "claude-test", "backoff": "0.01", **extra}
    return example.AnthropicMessagesBackend(args)


def _prompt(text: str) -> Prompt:
    messages = ({"role": "system", "content": "Answer with a number."},)
    messages += ({"role": "user", "content": text},)
    return Prompt(messages, tuple(Option(v, str(v)) for v in range(1, 6)), text)


def test_the_example_is_short_and_quoted_verbatim_by_its_page() -> None:
    code = EXAMPLE.read_text(encoding="utf-8")
    assert len(code.splitlines()) < 150
    page = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    assert code in blocks, "docs/plugins/http-backend.md must quote the example file as it is"


def test_the_example_is_a_thin_http_backend(example: ModuleType) -> None:
    cls = example.AnthropicMessagesBackend
    assert issubclass(cls, HTTPBackend)
    transport = {"_run_async", "post", "_wait", "_headers", "_redact", "_key_note"}
    assert not transport & set(vars(cls)), "the example must leave the transport to the base"


def test_answers_payload_and_usage(example: ModuleType) -> None:
    with MessagesServer() as srv:
        be = _backend(example, srv, concurrency="2")
        out = be.generate([_prompt(f"statement {i}") for i in range(5)], GenerationSettings())
    assert [c.text for c in out] == ["3"] * 5
    assert {c.meta["finish_reason"] for c in out} == {"end_turn"}
    body = srv.bodies[0]
    assert body["system"] == "Answer with a number."
    assert body["messages"] == [{"role": "user", "content": body["messages"][0]["content"]}]
    assert body["max_tokens"] == 24 and body["temperature"] == 0.0
    assert {h["x-api-key"] for h in srv.headers} == {KEY}
    assert not any("Authorization" in h for h in srv.headers)
    # 5 replies of 10 input and 1 output tokens each (the server's usage)
    assert be.usage() == {
        "requests": 5,
        "retries": 0,
        "prompt_tokens": 50,
        "completion_tokens": 5,
        "total_tokens": 55,
    }
    assert be.identity()["backend"] == "anthropic-messages"
    assert KEY not in json.dumps(be.identity())


def test_retries_on_429_and_5xx(example: ModuleType) -> None:
    with MessagesServer(fail=[429, 500, 529]) as srv:
        be = _backend(example, srv, concurrency="1")
        out = be.generate([_prompt("x")], GenerationSettings())
    assert out[0].text == "3"
    assert len(srv.bodies) == 4  # three refusals, then the answer
    assert be.usage()["retries"] == 3 and be.usage()["requests"] == 1


def test_gives_up_after_max_retries(example: ModuleType) -> None:
    with MessagesServer(fail=[503] * 5) as srv:
        be = _backend(example, srv, max_retries="2")
        with pytest.raises(BackendError, match="gave up after 3 attempts"):
            be.generate([_prompt("x")], GenerationSettings())
    assert len(srv.bodies) == 3


def test_deadline_bounds_a_slow_server(example: ModuleType) -> None:
    with MessagesServer(delay=3.0) as srv:
        be = _backend(example, srv, deadline="0.5", timeout="60")
        start = time.perf_counter()
        with pytest.raises(BackendError, match=r"gave up after .* 0.5 s deadline"):
            be.generate([_prompt("x")], GenerationSettings())
        took = time.perf_counter() - start
    assert took < 2.5  # the 3 s reply was not awaited


def test_a_refusal_echoing_the_key_is_redacted(example: ModuleType) -> None:
    with MessagesServer() as srv:
        be = _backend(example, srv, model="refused")
        with pytest.raises(BackendError) as info:
            be.generate([_prompt("x")], GenerationSettings())
    message = str(info.value)
    assert "HTTP 401" in message and "invalid key ***" in message
    assert KEY not in message
    assert "ANTHROPIC_API_KEY" in message  # says which variable psym read


def test_no_logprobs_and_no_key_in_model_args(example: ModuleType) -> None:
    with MessagesServer() as srv:
        be = _backend(example, srv)
        with pytest.raises(BackendError, match="cannot score options"):
            be.option_logprobs([_prompt("x")], GenerationSettings("logprob"))
        assert srv.bodies == []
        with pytest.raises(BackendError, match="api_key_env=NAME"):
            _backend(example, srv, api_key=KEY)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ({"content": "3"}, "'content' should be a list of blocks"),
        ({"content": [{"type": "text", "text": 3}]}, "'text' should be a string"),
        ({"content": ["3"]}, "'content' should be a list of blocks"),
        ({}, "'content' should be a list of blocks"),
    ],
)
def test_malformed_replies_are_one_clear_error(
    example: ModuleType, reply: dict[str, Any], expected: str
) -> None:
    be = example.AnthropicMessagesBackend({"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    with pytest.raises(BackendError, match="malformed response") as info:
        be.parse_response(reply, _prompt("x"))
    assert expected in str(info.value)


def test_psym_eval_through_the_plugin_keeps_the_key_out(
    example: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from psymetrics_core.administer.runner import evaluate

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    session = Session()
    session.register(example, name="anthropic-example")
    with MessagesServer(fail=[429]) as srv:
        res = evaluate(
            ["bfi"],
            session=session,
            model="anthropic-messages",
            model_args=f"base_url={srv.base_url},model=claude-test,backoff=0.01",
            limit=4,
            output=tmp_path / "run",
        )
    assert len(srv.bodies) == 5  # 4 items, one of them retried once
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert [r["answer"] for r in rows] == [3, 3, 3, 3]
    assert res["backend"]["backend"] == "anthropic-messages"
    assert res["usage"] == {  # 4 answers of 10 + 1 tokens; the 429 is a retry, not a request
        "requests": 4,
        "retries": 1,
        "prompt_tokens": 40,
        "completion_tokens": 4,
        "total_tokens": 44,
    }
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.parent.name == "run" for p in written) and any("cache" in p.parts for p in written)
    for path in written:
        assert KEY.encode() not in path.read_bytes(), f"{path} holds the key"
    out = capsys.readouterr()
    assert KEY not in out.out + out.err
