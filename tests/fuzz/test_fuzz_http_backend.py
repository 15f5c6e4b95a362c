"""Fuzz cases of the HTTP base through the plugin guide's Anthropic-style example
(docs/plugins/examples/anthropic_backend.py): malformed ``--model-args`` and hostile replies
(not JSON, not an object, wrong shapes, over the byte bound, an error echoing the key) each end
in one clear ``BackendError`` line naming the argument or the endpoint, the key masked."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from harness import expect_clean_error

from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.types import Prompt

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "plugins" / "examples" / "anthropic_backend.py"
KEY = "sk-ant-fuzz-9876543210"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("anthropic_fuzz", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODEL_ARGS = [
    ("no-url", {"model": "m"}, "base_url"),
    ("no-model", {"base_url": "http://h/v1"}, "model=NAME"),
    ("ftp", {"base_url": "ftp://h/v1", "model": "m"}, "http"),
    ("bad-port", {"base_url": "http://h:99999/v1", "model": "m"}, "valid URL"),
    ("key-inline", {"base_url": "http://h/v1", "model": "m", "api_key": KEY}, "api_key_env"),
    ("top-logprobs", {"base_url": "http://h/v1", "model": "m", "top_logprobs": "5"}, "unknown"),
    ("deadline-0", {"base_url": "http://h/v1", "model": "m", "deadline": "0"}, "deadline"),
    ("retries-x", {"base_url": "http://h/v1", "model": "m", "max_retries": "x"}, "max_retries"),
    ("cap-small", {"base_url": "http://h/v1", "model": "m", "max_response_bytes": "9"}, "1024"),
]


@pytest.mark.parametrize("name, args, expect", MODEL_ARGS, ids=[c[0] for c in MODEL_ARGS])
def test_fuzz_example_model_args(name: str, args: dict[str, str], expect: str) -> None:
    cls = _example().AnthropicMessagesBackend
    out = expect_clean_error(lambda: cls(args), [], label=name)
    assert expect in out.message and KEY not in out.message, out.message


BIG = b'{"content": [{"type": "text", "text": "' + b"x" * 4096 + b'"}]}'
REPLIES = [
    ("not-json", 200, b"<html>hello</html>", "not JSON"),
    ("list", 200, b"[1, 2]", "not a JSON object"),
    ("content-str", 200, b'{"content": "3"}', "malformed response"),
    ("content-null", 200, b'{"content": null}', "malformed response"),
    ("block-number", 200, b'{"content": [{"type": "text", "text": 3}]}', "malformed response"),
    ("blocks-not-objects", 200, b'{"content": [3]}', "malformed response"),
    ("too-big", 200, BIG, "max_response_bytes"),
    ("bad-request-echo", 400, ('{"error": {"message": "bad key ' + KEY + '"}}').encode(), "***"),
    ("not-found", 404, b"nothing here", "HTTP 404"),
]


@pytest.fixture
def server() -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {"status": 200, "body": b"{}"}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 -- http.server's name
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(state["status"])
            self.send_header("Content-Length", str(len(state["body"])))
            self.end_headers()
            try:
                self.wfile.write(state["body"])
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # shutdown() returns at the loop's next poll: 0.05 s, not the default 0.5 s
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    state["url"] = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield state
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("name, status, body, expect", REPLIES, ids=[c[0] for c in REPLIES])
def test_fuzz_example_replies(
    server: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    status: int,
    body: bytes,
    expect: str,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.update(status=status, body=body)
    args = {"base_url": server["url"], "model": "m", "max_response_bytes": "1024"}
    be = _example().AnthropicMessagesBackend(args)
    prompt = Prompt(({"role": "user", "content": "hi"},), (), "hi")
    out = expect_clean_error(lambda: be.generate([prompt], GenerationSettings()), [], label=name)
    assert expect in out.message and KEY not in out.message, out.message
    assert "/v1/messages" in out.message, out.message
