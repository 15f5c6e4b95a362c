"""Options scored as whole assistant replies (``Option.turn_end``, the value-portrait task).

A backend that does not declare ``supports_turn_end`` would score the reply without the
end-of-turn tokens its chat template writes (or without any chat template): such a request is
refused in one line before anything is sent, and the line says what to use instead.
"""

from __future__ import annotations

import pytest

from psymetrics_core.backends.base import Backend, GenerationSettings, call_backend
from psymetrics_core.backends.cache import WrappedBackend, request_key
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import Completion, Option, Prompt

LOGPROB = GenerationSettings("logprob", 24, 0.0, 1234)
MSG = "How do I define my personal values?"


def _reply_prompt(turn_end: bool = True) -> Prompt:
    opts = (Option(1, "response 1", "Write them down.", turn_end=turn_end),)
    return Prompt(({"role": "user", "content": MSG},), opts, MSG)


class Recording(Backend):
    """Scores continuations; counts its calls."""

    name = "recording"
    supports_continuations = True

    def __init__(self, turn_end: bool) -> None:
        self.supports_turn_end = turn_end
        self.calls = 0

    def option_logprobs(self, prompts, settings, progress=None):
        self.calls += 1
        return [Completion(option_logprobs=(-1.0,) * len(p.options)) for p in prompts]

    def identity(self):
        return {"backend": "recording"}


def test_a_backend_without_turn_end_is_refused_before_any_request() -> None:
    be = Recording(turn_end=False)
    with pytest.raises(BackendError) as err:
        call_backend(be, [_reply_prompt()], LOGPROB)
    assert be.calls == 0
    line = str(err.value)
    assert "\n" not in line and "end-of-turn" in line
    assert "smollm2" in line and "psym import logprobs" in line


def test_the_wrappers_carry_the_capability() -> None:
    for declared in (False, True):
        inner = Recording(turn_end=declared)
        assert WrappedBackend(inner).supports_turn_end is declared
    with pytest.raises(BackendError, match="end-of-turn"):
        call_backend(WrappedBackend(Recording(turn_end=False)), [_reply_prompt()], LOGPROB)


def test_a_backend_with_turn_end_is_asked_and_plain_continuations_still_pass() -> None:
    be = Recording(turn_end=True)
    assert call_backend(be, [_reply_prompt()], LOGPROB)[0].option_logprobs == (-1.0,)
    plain = Recording(turn_end=False)
    call_backend(plain, [_reply_prompt(turn_end=False)], LOGPROB)
    assert plain.calls == 1


def test_turn_end_is_part_of_the_request_key_only_when_set() -> None:
    ident = {"backend": "hf", "pretrained": "x"}
    with_end = request_key(ident, _reply_prompt(True), LOGPROB)
    without = request_key(ident, _reply_prompt(False), LOGPROB)
    assert with_end != without
    assert "turn_end" not in _reply_prompt(False).options[0].to_json()
