"""The ``openai-chat`` backend: ``/chat/completions`` with the prompt's chat messages as they
are (images as data-URL parts); ``logprob`` mode reads each option among the first reply
token's ``top_logprobs``. Transport, retries and redaction: the HTTP base (:mod:`.http`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from psymetrics_core.backends.base import GenerationSettings, OnResult, Reporter, check_requests
from psymetrics_core.backends.http import Request, number
from psymetrics_core.backends.openai_api import OpenAIBackend, finish_reason
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import Completion, Prompt

__all__ = ["OpenAIChatBackend", "chat_messages"]


def chat_messages(prompt: Prompt) -> list[dict[str, Any]]:
    """The prompt's messages; its images become ``image_url`` data-URL content parts of the
    last user message (after its text)."""
    messages: list[dict[str, Any]] = [dict(m) for m in prompt.messages]
    if not prompt.images:
        return messages
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    parts: list[dict[str, Any]] = [{"type": "text", "text": messages[last]["content"]}]
    parts += [{"type": "image_url", "image_url": {"url": im.data_url()}} for im in prompt.images]
    messages[last] = {"role": "user", "content": parts}
    return messages


class OpenAIChatBackend(OpenAIBackend):
    """``/chat/completions``: the prompt's chat messages as they are (images as data URLs)."""

    name = "openai-chat"
    endpoint = "chat/completions"
    supports_images = True  # whether the served model reads them is the server's business
    supports_continuations = False  # logprob mode reads the first reply token's top_logprobs

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
        on_result: OnResult | None = None,
    ) -> list[Completion]:
        """First-token option log-probabilities; a continuation is refused before any request."""
        scoring = replace(settings, mode="logprob")  # whatever mode the caller passed
        check_requests(self, [(p, scoring) for p in prompts])
        return super().option_logprobs(prompts, settings, progress, on_result)

    def build_request(self, prompt: Prompt, settings: GenerationSettings) -> Request:
        """The messages, length, temperature and seed."""
        body = {
            "model": self.model,
            "messages": chat_messages(prompt),
            "max_tokens": settings.max_new_tokens,
            "temperature": settings.temperature,
            "seed": settings.seed,
        }
        return self.endpoint, body

    def parse_response(self, body: dict[str, Any], prompt: Prompt) -> Completion:
        """The first choice's ``message.content`` and ``finish_reason``."""
        choice = self.choice(body)
        message = choice.get("message") or {}
        if not isinstance(message, dict):
            raise self.malformed("'message' should be an object", message)
        text = message.get("content") or ""
        if not isinstance(text, str):
            raise self.malformed("'message.content' should be a string", text)
        return Completion(text=text, meta={"finish_reason": finish_reason(choice)})

    def build_logprob_requests(self, prompt: Prompt, settings: GenerationSettings) -> list[Request]:
        """One request for the first reply token's ``top_logprobs``."""
        if prompt.has_continuations:  # also when reached without option_logprobs' check
            raise BackendError(self.continuation_refusal())
        body = {
            "model": self.model,
            "messages": chat_messages(prompt),
            "max_tokens": 1,
            "temperature": 0.0,
            "seed": settings.seed,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        return [(self.endpoint, body)]

    def logprob_error(self, exc: BackendError) -> BackendError:
        """A refused request (HTTP 4xx) may mean the server has no chat logprobs: say so."""
        if "HTTP 4" in str(exc):
            return BackendError(
                f"{exc} -- this server may not offer logprobs on chat completions; use "
                "--mode generate, or --model openai-completions if it echoes prompt logprobs"
            )
        return exc

    def parse_logprob_responses(self, bodies: list[dict[str, Any]], prompt: Prompt) -> Completion:
        """Each option's log-probability among the first token's ``top_logprobs``."""
        choice = self.choice(bodies[0])
        logprobs = choice.get("logprobs") or {}
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        if (
            not content
            or not isinstance(content, list)
            or not isinstance(content[0], dict)
            or (content[0].get("top_logprobs") is None)
        ):
            raise BackendError(
                f"{self.shown()} returned no top_logprobs: the server does "
                "not offer logprobs for chat; use --mode generate, or --model openai-completions"
            )
        top = content[0]["top_logprobs"]
        if not isinstance(top, list) or not all(
            isinstance(a, dict) and number(a.get("logprob")) for a in top
        ):
            raise self.malformed("'top_logprobs' should be objects with a numeric 'logprob'", top)
        return _options_from_top(prompt, top, str(content[0].get("token", "")))


def _options_from_top(prompt: Prompt, top: list[dict[str, Any]], token: str) -> Completion:
    """Each option's log-probability among the first token's alternatives (-inf if absent)."""
    by_option: dict[str, list[float]] = {}
    for alt in top:
        by_option.setdefault(str(alt.get("token", "")).strip(), []).append(float(alt["logprob"]))
    scores = []
    for o in prompt.options:
        found = by_option.get(o.scored_text)
        scores.append(_logsumexp(found) if found else float("-inf"))
    missing = [o.value for o, s in zip(prompt.options, scores, strict=True) if math.isinf(s)]
    meta = {"token": token, "missing_options": missing}
    if len(missing) == len(scores):  # no option among the alternatives: nothing to score
        return Completion(text="", meta=meta)
    return Completion(option_logprobs=tuple(scores), meta=meta)


def _logsumexp(xs: list[float]) -> float:
    top = max(xs)
    return top + math.log(sum(math.exp(x - top) for x in xs))
