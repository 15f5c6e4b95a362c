"""A loopback OpenAI-compatible ``/chat/completions`` server with scripted replies.

It plays both the examinee (an image model) and the judges, answering by what the request
asks for, and it checks every image it receives: a ``data:image/png;base64,…`` URL in an
``image_url`` content part of the LAST user message, decoding to a PNG. Tests read
``received_images`` (SHA-256 per image) and ``bad`` (payload problems found).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image

SRAS = {
    "P": 2,
    "FQo": 6,
    "FQu": 2,
    "FQ-": 1,
    "WSumCog": 1,
    "FC": 2,
    "CF": 1,
    "C": 0,
    "C'": 1,
    "Y": 2,
    "V": 0,
    "T": 1,
    "M": 3,
    "FM": 2,
    "m": 1,
    "COP": 1,
    "AG": 0,
    "MOR": 1,
    "AGC": 0,
    "AGM": 0,
    "H": 2,
    "M-": 0,
}


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content if p.get("type") == "text")


class ScriptedServer:
    """Start with ``with ScriptedServer() as srv:``; ``srv.base_url`` for ``--model-args``."""

    def __init__(self, vary: bool = False) -> None:
        self.vary = vary  # replies derived from a hash of the request (differ by persona/framing)
        self.received_images: list[str] = []
        self.bad: list[str] = []
        self.requests = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = outer.answer(body)
                data = json.dumps(
                    {
                        "choices": [
                            {
                                "message": {"role": "assistant", "content": reply},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        # shutdown() returns at the loop's next poll: 0.05 s, not the default 0.5 s
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _check_images(self, messages: list[dict[str, Any]]) -> int:
        n = 0
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        for i, m in enumerate(messages):
            if isinstance(m["content"], str):
                continue
            for part in m["content"]:
                if part.get("type") != "image_url":
                    continue
                if i != last_user:
                    self.bad.append(f"image in message {i}, not the last user message")
                url = part["image_url"]["url"]
                head, _, b64 = url.partition(",")
                if head != "data:image/png;base64":
                    self.bad.append(f"not a PNG data URL: {head[:40]}")
                    continue
                raw = base64.b64decode(b64)
                try:
                    Image.open(io.BytesIO(raw)).verify()
                except Exception as exc:  # noqa: BLE001
                    self.bad.append(f"undecodable PNG: {exc}")
                with self._lock:
                    self.received_images.append(hashlib.sha256(raw).hexdigest())
                n += 1
        return n

    def answer(self, body: dict[str, Any]) -> str:
        """The scripted reply to one chat request."""
        with self._lock:
            self.requests += 1
        messages = body["messages"]
        self._check_images(messages)
        system = " ".join(_text(m["content"]) for m in messages if m["role"] == "system")
        user = _text(messages[-1]["content"])
        if "Sentence Completion Test" in system:
            ids = re.findall(r"^\[([^\]]+)\] Stem:", user, re.M)
            comps = re.findall(r"Completion: (.*)$", user, re.M)
            scores = {i: _h(c) % 7 for i, c in zip(ids, comps, strict=False)}
            return "<analysis>scored</analysis>\n<answer>" + json.dumps(scores) + "</answer>"
        if "Rorschach coder" in system:
            return (
                "<analysis>Card 2: red seen as blood (CF).</analysis>\n<answer>"
                + json.dumps(SRAS)
                + "</answer>"
            )  # noqa: E501
        if "diagnostician" in system and self.vary:
            h = _h(user.split("=== Structured Interpretation ===")[-1])
            if "O=<1-5>" in user:
                lv = [1 + (h >> (3 * k)) % 5 for k in range(5)]
                return "<answer>O={}, C={}, E={}, A={}, N={}</answer>".format(*lv)
            if "<answer>XXXX</answer>" in user:
                return (
                    "<answer>"
                    + "".join(p[(h >> k) % 2] for k, p in enumerate(("EI", "SN", "TF", "JP")))
                    + "</answer>"
                )  # noqa: E501
            label = "Depression" if "Depression=" in user else "Suicide"
            return f"<answer>{label}={h % 4}</answer>"
        if "diagnostician" in system:
            if "O=<1-5>" in user:
                return (
                    "<analysis>O: imaginative.</analysis>\n<answer>O=4, C=2, E=3, A=4, N=2</answer>"
                )
            if "<answer>XXXX</answer>" in user:
                return "<analysis>EI: observer → I</analysis>\n<answer>INFP</answer>"
            if "Depression=" in user:
                return "<analysis>mood intact</analysis>\n<answer>Depression=1</answer>"
            return "<analysis>no ideation</analysis>\n<answer>Suicide=0</answer>"
        if "inkblot" in user:
            return "A bat with wide wings, and two people dancing at the sides."
        if self.vary and "complete the following sentence" in user:
            return f"...my answer {_h(system + user) % 97}."
        return "The wings are dark and spread out; the shapes at the edge look like arms."
