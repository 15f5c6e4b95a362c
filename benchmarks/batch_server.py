"""A loopback server with the shape of the OpenAI Batch API, for tests (no model).

``POST /v1/files`` (multipart, purpose ``batch``) stores an input file; ``POST /v1/batches``
creates a batch from it; ``GET /v1/batches/{id}`` reports ``in_progress`` for the first
``polls_before_done`` polls, then ``completed`` with an ``output_file_id``; ``GET
/v1/files/{id}/content`` returns the output JSONL. Each request is answered as
:class:`benchmarks.latency_server.LatencyServer` answers it online, so batch and online runs can
be compared item by item. ``POST /v1/chat/completions`` answers online too (and is counted).
"""

from __future__ import annotations

import json
import threading
import time
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .latency_server import LatencyServer

__all__ = ["BatchServer"]


class BatchServer:
    """Start with ``with BatchServer() as srv: srv.base_url``."""

    def __init__(self, polls_before_done: int = 1, fail_ids: tuple[str, ...] = ()) -> None:
        self.answers = LatencyServer(latency=0.0)  # only its answer functions are used
        self.polls_before_done = polls_before_done
        self.fail_ids = set(fail_ids)  # custom_ids answered with an error line
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.online_requests = 0
        self._polls: dict[str, int] = {}
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                owner._post(self)

            def do_GET(self) -> None:  # noqa: N802
                owner._get(self)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, on every exit
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> BatchServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @staticmethod
    def _reply(h: BaseHTTPRequestHandler, status: int, data: Any, raw: bytes | None = None) -> None:
        blob = raw if raw is not None else json.dumps(data).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(blob)))
        h.end_headers()
        h.wfile.write(blob)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{len(self.files) + len(self.batches) + 1}"

    def _post(self, h: BaseHTTPRequestHandler) -> None:
        data = h.rfile.read(int(h.headers.get("Content-Length", 0)))
        if h.path == "/v1/files":
            msg = BytesParser(policy=HTTP).parsebytes(
                f"Content-Type: {h.headers['Content-Type']}\r\n\r\n".encode() + data
            )
            parts = {p.get_param("name", header="content-disposition"): p for p in msg.iter_parts()}
            if "file" not in parts or parts["purpose"].get_content().strip() != "batch":
                return self._reply(h, 400, {"error": {"message": "need file and purpose=batch"}})
            with self._lock:
                fid = self._new_id("file")
                self.files[fid] = parts["file"].get_payload(decode=True)
            return self._reply(h, 200, {"id": fid, "object": "file", "purpose": "batch"})
        body = json.loads(data or b"{}")
        if h.path == "/v1/batches":
            if body.get("input_file_id") not in self.files:
                return self._reply(h, 404, {"error": {"message": "no such file"}})
            with self._lock:
                bid = self._new_id("batch")
                self.batches[bid] = {
                    "id": bid,
                    "object": "batch",
                    "status": "validating",
                    "endpoint": body.get("endpoint"),
                    "input_file_id": body["input_file_id"],
                }
                self._polls[bid] = 0
            return self._reply(h, 200, self.batches[bid])
        if h.path.endswith("/chat/completions"):
            with self._lock:
                self.online_requests += 1
            return self._reply(h, 200, self.answers._chat(body))
        return self._reply(h, 404, {"error": {"message": "not found"}})

    def _run_batch(self, batch: dict[str, Any]) -> None:
        lines = self.files[batch["input_file_id"]].decode().splitlines()
        out = []
        for line in lines:
            req = json.loads(line)
            if req["custom_id"] in self.fail_ids:
                resp = {"status_code": 500, "body": {"error": {"message": "injected"}}}
            else:
                resp = {"status_code": 200, "body": self.answers._chat(req["body"])}
            out.append(
                json.dumps(
                    {
                        "id": f"r{len(out)}",
                        "custom_id": req["custom_id"],
                        "response": resp,
                        "error": None,
                    }
                )
            )
        fid = self._new_id("file")
        self.files[fid] = ("\n".join(out) + "\n").encode()
        n = len(lines)
        batch.update(
            status="completed",
            output_file_id=fid,
            completed_at=int(time.time()),
            request_counts={"total": n, "completed": n, "failed": 0},
        )

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        parts = h.path.strip("/").split("/")
        if len(parts) == 3 and parts[:2] == ["v1", "batches"] and parts[2] in self.batches:
            with self._lock:
                batch = self.batches[parts[2]]
                self._polls[parts[2]] += 1
                if batch["status"] != "completed":
                    if self._polls[parts[2]] > self.polls_before_done:
                        self._run_batch(batch)
                    else:
                        batch["status"] = "in_progress"
            return self._reply(h, 200, batch)
        if len(parts) == 4 and parts[1] == "files" and parts[3] == "content":
            if parts[2] in self.files:
                return self._reply(h, 200, None, raw=self.files[parts[2]])
        return self._reply(h, 404, {"error": {"message": "not found"}})
