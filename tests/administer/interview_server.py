"""A loopback OpenAI-compatible server (``/v1/chat/completions``) that is both the interviewed
subject and the judge, for the interview tests.

As the **subject** (request ``model`` = "subject") it answers a BFI question as the persona named
in the system message ("You are Ann.") would: the option it means is the persona's intended trait
level on the item's scale, turned over (6 - level) for a reverse-keyed item, said in words
("Honestly: agree strongly."). The persona declines the questions in its ``declines`` set.

As the **judge** (``model`` = "judge") it reads the option-conversion prompt the way a careful
judge would: per "Item ID" block, the option label named in the answer, or "none" when the answer
names none. With ``drop_first`` it leaves that item out of the first reply that holds it (to
exercise the bounded retry). Asked for an **expert rating** of a scale (the prompt asks for
"SCORE: X"), it reads each numbered question–answer pair, takes the option the answer names,
turns it over (6 - option) where the question is marked "(opposite pole)", and scores the
batch as the mean of those levels ("SCORE: none" when no answer names an option). Every
request body is kept (``bodies``) so tests count what each side was asked.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LABELS = [
    "Disagree strongly",
    "Disagree a little",
    "Neither agree nor disagree",
    "Agree a little",
    "Agree strongly",
]
DECLINE = "I would rather not say."


class Persona:
    """A persona's intended BFI levels (1-5 per trait) and the items it declines."""

    def __init__(self, levels: dict[str, int], declines: frozenset[str] = frozenset()) -> None:
        self.levels = levels
        self.declines = declines


class InterviewServer:
    """The subject-and-judge server (module docstring). ``questions`` maps a question text to
    (item id, scale, reverse) as in the instrument."""

    def __init__(
        self,
        personas: dict[str, Persona],
        questions: dict[str, tuple[str, str, bool]],
        drop_first: str | None = None,
    ) -> None:
        self.personas = personas
        self.questions = questions
        self.drop_first = drop_first
        self.dropped = 0
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 -- http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = owner.reply(body)
                out = json.dumps(
                    {
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> InterviewServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self, model: str) -> int:
        """Requests received for ``model`` ("subject" or "judge")."""
        with self.lock:
            return sum(1 for b in self.bodies if b["model"] == model)

    def reply(self, body: dict[str, Any]) -> str:
        with self.lock:
            self.bodies.append(body)
        messages = body["messages"]
        if body["model"] == "subject":
            return self._answer(messages)
        return self._judge(messages[-1]["content"])

    def _answer(self, messages: list[dict[str, str]]) -> str:
        system = " ".join(m["content"] for m in messages if m["role"] == "system")
        name = re.search(r"You are (\w+)\.", system)
        persona = self.personas[name.group(1) if name else "nobody"]
        item, scale, reverse = self.questions[messages[-1]["content"]]
        if item in persona.declines:
            return DECLINE
        level = persona.levels[scale]
        meant = 6 - level if reverse else level
        return f"Honestly: {LABELS[meant - 1].lower()}."

    def _judge(self, prompt: str) -> str:
        if '"SCORE: X"' in prompt:
            return self._expert(prompt)
        lines = ["Analysis: each answer names its option."]
        for block in re.findall(r'Item (\S+)\n.*?\nAnswer: "(.*?)"', prompt, re.S):
            item, answer = block
            if item == self.drop_first:
                with self.lock:
                    self.dropped += 1
                    if self.dropped == 1:
                        continue
            said = re.fullmatch(r"Honestly: (.+)\.", answer)
            known = [lab.lower() for lab in LABELS]
            if said and said.group(1) in known:
                lines.append(f"{item}: {known.index(said.group(1)) + 1}")
            else:
                lines.append(f"{item}: none")
        return "\n".join(lines)

    def _expert(self, prompt: str) -> str:
        known = [lab.lower() for lab in LABELS]
        levels = []
        pairs = re.findall(
            r'\d+\. Question: ".*?"( \(opposite pole\))?\n   Answer: "(.*?)"', prompt
        )
        for pole, answer in pairs:
            said = re.fullmatch(r"Honestly: (.+)\.", answer)
            if said and said.group(1) in known:
                option = known.index(said.group(1)) + 1
                levels.append(6 - option if pole else option)
        if not levels:
            return "Analysis: the person declined every question.\nSCORE: none"
        analysis = f"Analysis: {len(levels)} of {len(pairs)} answers name an option."
        return f"{analysis}\nSCORE: {sum(levels) / len(levels):g}"
