"""A loopback HTTP server that answers with whatever a test scripts: malformed JSON, echoed
headers, huge bodies, slow replies, Retry-After dates. Used by the hardening tests only."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["HostileServer", "Reply", "chat_ok"]


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    body: bytes | str | dict[str, Any] | list[Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunks: int = 0  # > 0: stream ``body`` this many times without Content-Length


def chat_ok(text: str = "3") -> dict[str, Any]:
    """A well-formed chat completion."""
    return {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
    }


class HostileServer:
    """``with HostileServer(script) as srv:``; ``script(n, request) -> Reply`` for request n."""

    def __init__(self, script: Callable[[int, dict[str, Any]], Reply]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                owner._handle(self)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, on every exit
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length", 0)))
        request = {
            "path": h.path,
            "headers": dict(h.headers.items()),
            "body": json.loads(raw or b"{}"),
        }
        with self._lock:
            n = len(self.requests)
            self.requests.append(request)
        reply = self.script(n, request)
        if reply.delay:
            time.sleep(reply.delay)
        body = reply.body
        if isinstance(body, dict | list):
            blob = json.dumps(body).encode()
        elif isinstance(body, str):
            blob = body.encode()
        else:
            blob = body or b""
        try:
            h.send_response(reply.status)
            h.send_header("Content-Type", "application/json")
            for k, v in reply.headers.items():
                h.send_header(k, v)
            if reply.chunks:
                h.send_header("Connection", "close")
                h.end_headers()
                for _ in range(reply.chunks):
                    h.wfile.write(blob)
                h.close_connection = True
                return
            h.send_header("Content-Length", str(len(blob)))
            h.end_headers()
            h.wfile.write(blob)
        except (BrokenPipeError, ConnectionResetError):
            pass
