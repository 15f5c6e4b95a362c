"""An OpenAI-compatible server on loopback that answers the probe prompts from an answer key.

It stands in for a model that knows the inventory perfectly: it reads the item index, the masked
item or the item from the prompt (the paper's templates) and returns the gold answer from an
``AnswerKey`` built by the test, independently of the plugin's code. ``ignore_reverse`` makes
it answer option-score prompts with the raw codes 1..R (a model that ignores reverse keying).
``refusal`` makes it answer every verbatim prompt with that text, cut like a real server's at the
request's ``max_tokens`` (``CHARS_PER_TOKEN`` characters a token) with ``finish_reason``
"length". It counts requests per prompt, so resumed runs can be checked at the server.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class KeyItem:
    """One item of the answer key."""

    index: int
    text: str  # as shown in prompts (BFI: with its stem)
    dimension: str
    options: list[str]  # labels in ascending raw order
    scores: list[float]  # keyed score of each option, same order


@dataclass
class AnswerKey:
    """What a perfect model knows about one inventory."""

    name: str
    items: list[KeyItem]
    by_text: dict[str, KeyItem] = field(init=False)

    def __post_init__(self) -> None:
        self.by_text = {it.text: it for it in self.items}


def _between(text: str, start: str, end: str) -> str:
    i = text.index(start) + len(start)
    return text[i : text.index(end, i)]


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


CHARS_PER_TOKEN = 4


class OracleServer:
    """``with OracleServer(keys) as srv: srv.base_url``; ``srv.counts`` per prompt text."""

    def __init__(
        self,
        keys: list[AnswerKey],
        *,
        ignore_reverse: bool = False,
        latency: float = 0.0,
        refusal: str | None = None,
    ) -> None:
        self.keys = keys
        self.ignore_reverse = ignore_reverse
        self.refusal = refusal
        self.latency = latency
        self.counts: Counter[str] = Counter()
        self.completed: list[str] = []
        self.requests = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no 40 ms delayed-ACK stall per request

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                try:
                    owner._handle(self)
                except (BrokenPipeError, ConnectionResetError):  # the client was killed
                    pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, on every exit
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> OracleServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length", 0))) or b"{}")
        prompt = body["messages"][-1]["content"]
        with self._lock:
            self.requests += 1
            self.counts[prompt] += 1
        time.sleep(self.latency)
        answer, finish = self.answer(prompt), "stop"
        budget = int(body.get("max_tokens") or 0) * CHARS_PER_TOKEN
        if self.refusal is not None and prompt.startswith("You are given metadata"):
            answer = self.refusal
            if budget and len(answer) > budget:
                answer, finish = answer[:budget], "length"
        blob = json.dumps(
            {
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": finish,
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 3},
            }
        ).encode()
        try:
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(blob)))
            h.end_headers()
            h.wfile.write(blob)
        except (BrokenPipeError, ConnectionResetError):  # the client was killed
            return
        with self._lock:
            self.completed.append(prompt)

    def _key(self, name: str) -> AnswerKey | None:
        return next((k for k in self.keys if k.name == name), None)

    def answer(self, prompt: str) -> str:
        """The gold answer to one probe prompt."""
        if prompt.startswith("You are given metadata"):
            key = self._key(_between(prompt, "- Inventory name: ", "\n"))
            index = int(_between(prompt, "- Item index: ", " "))
            return key.items[index - 1].text if key else "I do not know this inventory."
        if prompt.startswith("You are given a psychometric inventory item with one"):
            masked = _between(prompt, "Item (masked):\n\n", "\n\nInstructions")
            pattern = re.escape(masked).replace(re.escape("[MASK]"), r"([\w'-]+)")
            for key in self.keys:
                for it in key.items:
                    m = re.fullmatch(pattern, it.text)
                    if m:
                        return m.group(1)
            return "unknown"
        if prompt.startswith("You are given a psychometric inventory, and"):
            key = self._key(_between(prompt, "Inventory name: ", "\n"))
            assert key is not None
            return key.by_text[_between(prompt, "Item:\n", "\n\nInstructions")].dimension
        item_text = _between(prompt, "Item: ", "\nDimension: ")
        it = next(k.by_text[item_text] for k in self.keys if item_text in k.by_text)
        if "Target Score: " in prompt:
            target = float(_between(prompt, "Target Score: ", "\n"))
            return next(lab for lab, s in zip(it.options, it.scores, strict=True) if s == target)
        if self.ignore_reverse:
            return ", ".join(str(i) for i in range(1, len(it.options) + 1))
        return ", ".join(_num(s) for s in it.scores)
