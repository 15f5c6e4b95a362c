"""A small OpenAI-compatible HTTP server with a fixed latency per request (no model).

It answers ``/v1/chat/completions`` and ``/v1/completions`` deterministically from a hash of the
request, sleeps ``latency`` seconds per request, and counts requests and the peak number in
flight. Used by the benchmark (throughput against the latency bound) and by unit tests
(retries, concurrency limits, key handling). Run alone: ``python -m benchmarks.latency_server``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LatencyServer"]


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16)


class LatencyServer:
    """Start with ``with LatencyServer(latency=0.2) as srv: srv.base_url``."""

    def __init__(
        self,
        latency: float = 0.2,
        *,
        fail: list[int] | None = None,
        api_key: str | None = None,
        chat_logprobs: bool = True,
        echo: bool = True,
        port: int = 0,
        answer: Any = None,
    ) -> None:
        self.latency = latency
        # answer(messages) -> the chat reply (default: a digit 1-5 from a hash of the messages)
        self.answer = answer
        self.fail = list(fail or [])  # status codes returned by the first requests, in order
        self.api_key = api_key
        self.chat_logprobs = chat_logprobs
        self.echo = echo
        self.requests = 0
        self.in_flight = 0
        self.peak = 0
        self.bodies: list[dict[str, Any]] = []
        # requests that arrived while a request with another seed was in flight (one stream
        # across repeats) — counted per arrival
        self.seed_overlaps = 0
        self._seeds: list[Any] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                owner._handle(self)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/stats"):  # for a server in another process
                    with owner._lock:
                        stats = {"requests": owner.requests, "peak": owner.peak}
                    return owner._reply(self, 200, stats)
                return owner._reply(self, 404, {"error": {"message": "not found"}})

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self._httpd = Server(("127.0.0.1", port), Handler)
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, on every exit
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> LatencyServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _reply(self, h: BaseHTTPRequestHandler, status: int, data: dict[str, Any]) -> None:
        blob = json.dumps(data).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(blob)))
        if status == 429:
            h.send_header("Retry-After", "0.05")
        h.end_headers()
        h.wfile.write(blob)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length", 0))) or b"{}")
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.bodies.append(body)
            seed = body.get("seed")
            if any(s != seed for s in self._seeds):
                self.seed_overlaps += 1
            self._seeds.append(seed)
            status = self.fail.pop(0) if self.fail else 200
        try:
            time.sleep(self.latency)
            if self.api_key is not None and h.headers.get("Authorization") != (
                f"Bearer {self.api_key}"
            ):
                return self._reply(h, 401, {"error": {"message": "bad key"}})
            if status != 200:
                return self._reply(h, status, {"error": {"message": f"injected {status}"}})
            if h.path.endswith("/chat/completions"):
                return self._reply(h, 200, self._chat(body))
            if h.path.endswith("/completions"):
                return self._reply(h, 200, self._completion(body))
            return self._reply(h, 404, {"error": {"message": "not found"}})
        finally:
            with self._lock:
                self.in_flight -= 1
                self._seeds.remove(seed)

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(body.get("messages"), sort_keys=True)
        answer = self.answer(body.get("messages")) if self.answer else str(1 + _h(text) % 5)
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": f"{answer}"},
            "finish_reason": "stop",
        }
        if body.get("logprobs"):
            if not self.chat_logprobs:
                return {"choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 1}}
            top = [
                {"token": str(v), "logprob": -((_h(text + str(v)) % 1000) / 100.0)}
                for v in range(0, 7)
            ]
            top.sort(key=lambda d: -d["logprob"])
            top = top[: int(body.get("top_logprobs") or 5)]
            choice["logprobs"] = {"content": [{**top[0], "top_logprobs": top}]}
        return {"choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 1}}

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = str(body.get("prompt", ""))
        choice: dict[str, Any] = {
            "index": 0,
            "text": str(1 + _h(prompt) % 5),
            "finish_reason": "length",
        }
        if body.get("echo") and body.get("logprobs") is not None and self.echo:
            # one "token" per character; a character's logprob depends on everything before it
            lps: list[float | None] = [None] + [
                -((_h(prompt[: i + 1]) % 1000) / 100.0) for i in range(1, len(prompt))
            ]
            choice["text"] = prompt + choice["text"]
            choice["logprobs"] = {
                "tokens": list(prompt),
                "token_logprobs": lps,
                "text_offset": list(range(len(prompt))),
            }
        return {
            "choices": [choice],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": 1},
        }


def main() -> None:
    """Serve until interrupted."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--port", type=int, default=8089)
    a = ap.parse_args()
    with LatencyServer(a.latency, port=a.port) as srv:
        print(f"serving {srv.base_url} with {a.latency}s latency", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
