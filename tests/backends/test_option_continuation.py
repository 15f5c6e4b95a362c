"""Options that carry a continuation (probe tasks' sequence log-likelihoods, issue 12).

Every existing prompt must keep its response-cache key byte for byte: the hex digests below were
computed with the code before ``Option.continuation`` existed (psymetrics main at e71e0e8,
``backends.cache.request_key`` on exactly these arguments), so a cache filled by an older
psymetrics still answers.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from psymetrics_core.api import session_or_default
from psymetrics_core.backends.base import Backend, GenerationSettings, call_backend
from psymetrics_core.backends.cache import CachedBackend, ResponseCache, request_key
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import Completion, ImagePart, Option, Prompt
from psymetrics_core.records import SampleRecord

REPO = Path(__file__).resolve().parents[2]
QUESTION = "I am talkative. 1 Disagree 2 Agree"
ORDINARY = Prompt(
    ({"role": "system", "content": "Answer with a number."}, {"role": "user", "content": QUESTION}),
    (Option(1, "Disagree"), Option(2, "Agree")),
    QUESTION,
)
IDENT = {"backend": "hf", "pretrained": "x"}
SEQUENCE = "January\nFebruary\nMarch"


def _sequence_prompt(cont: str = SEQUENCE) -> Prompt:
    msg = "List the months in order, one per line."
    return Prompt(({"role": "user", "content": msg},), (Option(0, "sequence", cont),), msg)


class Recording(Backend):
    """Scores nothing; records whether it was called at all."""

    name = "recording"

    def __init__(self, continuations: bool) -> None:
        self.supports_continuations = continuations
        self.calls = 0

    def option_logprobs(self, prompts, settings, progress=None):
        self.calls += 1
        return [Completion(option_logprobs=(-1.0,) * len(p.options)) for p in prompts]

    def identity(self):
        return {"backend": "recording"}


def test_ordinary_prompts_keep_their_cache_keys() -> None:
    # hex digests from the code before Option.continuation (see the module docstring)
    gen = request_key(IDENT, ORDINARY, GenerationSettings("generate", 24, 0.0, 1234))
    assert gen == "5d2e5d5082ce75165f1932de44a2f9c3f550a519b3a6b7153605922be71a8564"
    lp = request_key(IDENT, ORDINARY, GenerationSettings("logprob", 24, 0.0, 1234))
    assert lp == "7161224a9689478394c9a27aca5d531e916cb7efb9ea0030a0f56f38e7aa12d7"
    assert ORDINARY.to_json()["options"] == [
        {"value": 1, "label": "Disagree"},
        {"value": 2, "label": "Agree"},
    ]


def test_a_continuation_is_serialised_scored_and_keyed() -> None:
    opt = Option(0, "sequence", SEQUENCE)
    assert opt.scored_text == SEQUENCE and Option(3, "Agree").scored_text == "3"
    assert opt.to_json() == {"value": 0, "label": "sequence", "continuation": SEQUENCE}
    settings = GenerationSettings("logprob", 1, 0.0, 1234)
    plain = Prompt(_sequence_prompt().messages, (Option(0, "sequence"),), "x")
    # scoring the text is another request than scoring "0": another cache key
    assert request_key(IDENT, _sequence_prompt(), settings) != request_key(IDENT, plain, settings)
    assert request_key(IDENT, _sequence_prompt(), settings) != request_key(
        IDENT, _sequence_prompt("March\nFebruary\nJanuary"), settings
    )
    assert _sequence_prompt().has_continuations and not ORDINARY.has_continuations


def test_a_backend_without_continuations_refuses_before_any_call() -> None:
    settings = GenerationSettings("logprob", 1, 0.0, 1234)
    be = Recording(continuations=False)
    with pytest.raises(BackendError, match="cannot score a continuation's log-likelihood"):
        call_backend(be, [ORDINARY, _sequence_prompt()], settings)
    assert be.calls == 0
    # ordinary options still work, and a declaring backend gets the continuation
    assert call_backend(be, [ORDINARY], settings)[0].option_logprobs == (-1.0, -1.0)
    able = Recording(continuations=True)
    assert call_backend(able, [_sequence_prompt()], settings)[0].option_logprobs == (-1.0,)


def test_the_response_cache_passes_the_capability_through(tmp_path: Path) -> None:
    settings = GenerationSettings("logprob", 1, 0.0, 1234)
    for flag in (False, True):
        cached = CachedBackend(Recording(flag), ResponseCache(tmp_path / f"{flag}.sqlite3"))
        assert cached.supports_continuations is flag
    refusing = CachedBackend(Recording(False), ResponseCache(tmp_path / "r.sqlite3"))
    with pytest.raises(BackendError, match="supports_continuations is False"):
        call_backend(refusing, [_sequence_prompt()], settings)
    assert refusing.misses == 0 and refusing.backend.calls == 0  # type: ignore[attr-defined]


def test_declared_capabilities_of_the_shipped_backends() -> None:
    from psymetrics_core.backends.lmeval_bridge import LMEvalBackend
    from psymetrics_core.backends.openai_chat import OpenAIChatBackend
    from psymetrics_core.backends.openai_completions import OpenAICompletionsBackend

    assert Backend.supports_continuations is False  # the safe default
    assert LMEvalBackend.supports_continuations  # hf: the plugin's test_backend_hf_fast.py
    assert OpenAICompletionsBackend.supports_continuations
    assert OpenAIChatBackend.supports_continuations is False


def test_openai_chat_refuses_a_continuation_without_a_request() -> None:
    # nothing listens on port 9: any request would fail with a connection error instead
    chat = session_or_default().make_backend(
        "openai-chat", {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    )
    with pytest.raises(BackendError, match="cannot score a continuation's log-likelihood"):
        chat.option_logprobs([_sequence_prompt()], GenerationSettings("logprob", 1, 0.0, 1))
    assert chat.usage()["requests"] == 0
    # the per-request path refuses too (a stream that bypasses option_logprobs)
    import asyncio

    with pytest.raises(BackendError, match="supports_continuations is False"):
        asyncio.run(chat._logprob_one(None, _sequence_prompt(), GenerationSettings("logprob")))
    assert chat.usage()["requests"] == 0


def test_openai_completions_scores_the_continuation_by_echo() -> None:
    # benchmarks/latency_server.py echoes one logprob per character, a hash of the text so far
    sys.path.insert(0, str(REPO))
    from benchmarks.latency_server import LatencyServer, _h

    with LatencyServer(latency=0.0) as srv:
        be = session_or_default().make_backend(
            "openai-completions", {"base_url": srv.base_url, "model": "m"}
        )
        pr = _sequence_prompt()
        comp = call_backend(be, [pr], GenerationSettings("logprob", 1, 0.0, 1))[0]
    ctx = pr.messages[0]["content"]
    whole = ctx + SEQUENCE
    expected = sum(-((_h(whole[: i + 1]) % 1000) / 100.0) for i in range(len(ctx), len(whole)))
    assert comp.option_logprobs == (pytest.approx(expected),)


def test_a_sample_line_with_a_continuation_validates() -> None:
    line = {
        "task": "bfi.order",
        "kind": "probe",
        "form": "original",
        "item": "months:canonical",
        "prompt": _sequence_prompt().to_json(),
        "rendered_prompt": "List the months in order, one per line.",
        "completion": None,
        "option_logprobs": {"sequence": -3.5},
        "answer": None,
        "parse_status": "ok",
        "condition": "baseline",
        "repeat": 0,
        "seed": 1234,
        "item_meta": {"scales": [], "scored": True, "meta": {"probe": "order"}},
    }
    rec = SampleRecord.model_validate(line)
    assert rec.prompt.options[0].continuation == SEQUENCE


# -- the request stream (scheduler.start_stream -> Backend.answer_mixed) checks like call_backend --


class Streamed(Backend):
    """Records every request it is sent (generate or option_logprobs); declares images and
    continuations as told."""

    name = "streamed"

    def __init__(self, images: bool, continuations: bool) -> None:
        self.supports_images = images
        self.supports_continuations = continuations
        self.sent: list[Prompt] = []

    def generate(self, prompts, settings, progress=None):
        self.sent += prompts
        return [Completion(text="1") for _ in prompts]

    def option_logprobs(self, prompts, settings, progress=None):
        self.sent += prompts
        return [Completion(option_logprobs=(-1.0,) * len(p.options)) for p in prompts]

    def identity(self):
        return {"backend": "streamed"}


@dataclass
class _Cell:
    administration: str = "item-by-item"


@dataclass
class _Task:
    id: str = "toy"


@dataclass
class _Run:
    """What ``start_stream`` reads of a kind's ``CellRun``."""

    backend: Any
    prompts: list[Prompt]
    settings: GenerationSettings
    writer: Any = None
    reporter: Any = None
    cell: _Cell = field(default_factory=_Cell)
    task: _Task = field(default_factory=_Task)


class _AheadKind:
    """A kind whose prompts are known ahead (as the questionnaire kind's): lists its run's
    prompts as its requests."""

    def requests(self, run: _Run) -> list[tuple[Prompt, GenerationSettings]]:
        return [(p, run.settings) for p in run.prompts]


def _stream(tmp_path: Path, backend: Streamed, prompts: list[Prompt], mode: str) -> Any:
    """Start the run's request stream over one cell asking ``prompts``."""
    from psymetrics_core.administer.scheduler import start_stream

    cached = CachedBackend(backend, ResponseCache(tmp_path / "r.sqlite3"))
    run = _Run(cached, prompts, GenerationSettings(mode, 4, 0.0, 1234))
    return start_stream([(_AheadKind(), run)], cached)


IMAGE = ImagePart(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
WITH_IMAGE = Prompt(({"role": "user", "content": "Tell a story."},), (), "story", images=(IMAGE,))


@pytest.mark.parametrize(
    "prompts, mode, refusal",
    [
        ([ORDINARY, WITH_IMAGE], "generate", "backend 'streamed' does not take images"),
        (
            [ORDINARY, _sequence_prompt()],
            "logprob",
            "backend 'streamed' cannot score a continuation's log-likelihood",
        ),
    ],
    ids=["images", "continuations"],
)
def test_the_stream_refuses_like_call_backend_before_any_request(
    tmp_path: Path, prompts: list[Prompt], mode: str, refusal: str
) -> None:
    be = Streamed(images=False, continuations=False)
    settings = GenerationSettings(mode, 4, 0.0, 1234)
    with pytest.raises(BackendError) as direct:
        call_backend(be, prompts, settings)
    with pytest.raises(BackendError) as streamed:
        _stream(tmp_path, be, prompts, mode)
    # one line naming the backend that would have answered, the same as call_backend's
    assert refusal in str(streamed.value) and "\n" not in str(streamed.value)
    assert str(streamed.value) == str(direct.value)
    assert be.sent == []  # nothing was sent, nothing stored
    assert ResponseCache(tmp_path / "r.sqlite3").rows() == []


@pytest.mark.parametrize(
    "prompts, mode", [([ORDINARY, WITH_IMAGE], "generate"), ([_sequence_prompt()], "logprob")]
)
def test_the_stream_sends_what_a_capable_backend_declares(
    tmp_path: Path, prompts: list[Prompt], mode: str
) -> None:
    """The stream takes the kind's requests as listed: only the real backend's capabilities
    decide (a capable backend gets every request)."""
    be = Streamed(images=True, continuations=True)
    stream = _stream(tmp_path, be, prompts, mode)
    stream.wait()  # every claimed request answered (close() would stop it sending)
    assert stream.error is None
    assert be.sent == prompts and stream.fetched == len(prompts)
