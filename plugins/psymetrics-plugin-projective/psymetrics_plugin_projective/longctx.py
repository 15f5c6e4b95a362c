"""The ``longctx=FILE`` condition: a counselling dialogue prepended to every elicitation.

Wang et al. (2026, §5.3) prepend a multi-turn counselling conversation to the assessment to
test whether risk diagnoses respond to content. As in the authors' code, the first ``turns``
messages (default 10) follow the system messages; the counsellor speaks as ``user`` and the
persona's own past replies are ``assistant`` turns; when the dialogue opens with the client,
``user: "Hello, let's begin."`` is put first.

The file is JSON (a list of ``{"role", "content"}``, or ``{"turns": N, "messages": [...]}``)
or text with one ``Role: text`` line per message. Counsellor roles: counsellor, counselor,
therapist, doctor, psychologist, user; client roles: client, seeker, patient, assistant.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from psymetrics_core.api import Condition, PsymError

__all__ = ["longctx_condition", "read_dialogue", "DEFAULT_TURNS"]

DEFAULT_TURNS = 10
OPENING = "Hello, let's begin."
_USER = {"counsellor", "counselor", "therapist", "doctor", "psychologist", "user"}
_ASSISTANT = {"client", "seeker", "patient", "assistant"}


def _role(raw: Any, where: str) -> str:
    name = str(raw or "").strip().lower()
    if name in _USER:
        return "user"
    if name in _ASSISTANT:
        return "assistant"
    raise PsymError(
        f"{where}: role {raw!r} is neither a counsellor ({', '.join(sorted(_USER))}) "
        f"nor a client ({', '.join(sorted(_ASSISTANT))})"
    )


def read_dialogue(path: str | Path) -> tuple[list[dict[str, str]], int]:
    """The dialogue's messages (roles mapped) and the number of turns to keep."""
    p = Path(path)
    if not p.is_file():
        raise PsymError(f"longctx={path}: no such dialogue file")
    raw = p.read_text(encoding="utf-8-sig")
    turns = DEFAULT_TURNS
    msgs: list[dict[str, str]] = []
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise PsymError(f"{p}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
        if isinstance(data, dict):
            turns = data.get("turns", DEFAULT_TURNS)
            if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
                raise PsymError(f"{p}: 'turns' must be a positive integer, got {turns!r}")
            data = data.get("messages")
        if not isinstance(data, list):
            raise PsymError(f"{p}, line 1: expected a list of {{role, content}} messages")
        for i, m in enumerate(data, start=1):
            where = f"{p}, message {i}"
            if not isinstance(m, dict) or not str(m.get("content") or "").strip():
                raise PsymError(f"{where}: expected an object with 'role' and non-empty 'content'")
            msgs.append({"role": _role(m.get("role"), where), "content": str(m["content"]).strip()})
    else:
        for n, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            role, sep, text = line.partition(":")
            if not sep or not text.strip():
                raise PsymError(f"{p}, line {n}: expected 'Role: text'")
            msgs.append({"role": _role(role, f"{p}, line {n}"), "content": text.strip()})
    if not msgs:
        raise PsymError(f"{p}: the dialogue is empty")
    return msgs, turns


def prefix_history(messages: list[dict[str, str]], turns: int) -> list[dict[str, str]]:
    """The first ``turns`` messages, opened by the counsellor (the authors' rule)."""
    kept = list(messages[:turns])
    if kept and kept[0]["role"] == "assistant":
        kept = [{"role": "user", "content": OPENING}, *kept][:turns]
    return kept


def longctx_condition(arg: str | None) -> Condition:
    """``longctx=FILE``: insert the dialogue after the system messages of every prompt."""
    if not arg:
        raise PsymError("condition 'longctx' needs a dialogue file: --condition longctx=FILE")
    msgs, turns = read_dialogue(arg)
    history = prefix_history(msgs, turns)
    digest = hashlib.sha256(json.dumps(history, ensure_ascii=False).encode()).hexdigest()[:12]

    def apply(messages: list[dict[str, str]]) -> list[dict[str, str]]:
        out = [dict(m) for m in messages]
        n_sys = 0
        while n_sys < len(out) and out[n_sys]["role"] == "system":
            n_sys += 1
        return out[:n_sys] + [dict(m) for m in history] + out[n_sys:]

    transform: Callable[[list[dict[str, str]]], list[dict[str, str]]] = apply
    return Condition(
        f"longctx={Path(arg).stem}",
        facet="context",
        messages=transform,
        info={
            "file": str(arg),
            "sha256": digest,
            "turns": len(history),
            "placement": "after the system messages, before the task's turns",
        },
    )
