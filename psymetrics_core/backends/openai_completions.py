"""The ``openai-completions`` backend: ``/completions`` with the messages joined into one text;
``logprob`` mode sends ``context + option`` with ``echo`` and sums the option's prompt-token
log-probabilities (how lm-eval's ``local-completions`` scores multiple choice), so it scores
multi-token continuations. Transport, retries and redaction: the HTTP base (:mod:`.http`)."""

from __future__ import annotations

from typing import Any

from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.backends.http import Request, number
from psymetrics_core.backends.openai_api import OpenAIBackend, finish_reason
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import Completion, Prompt

__all__ = ["OpenAICompletionsBackend"]


class OpenAICompletionsBackend(OpenAIBackend):
    """``/completions``: messages joined into one text; ``logprob`` mode needs prompt echo."""

    name = "openai-completions"
    supports_continuations = True  # prompt echo scores every token of a continuation
    endpoint = "completions"

    @staticmethod
    def context_text(prompt: Prompt) -> str:
        """The plain-text prompt sent to the completions endpoint (text only: never images)."""
        if prompt.images:
            raise BackendError("openai-completions sends text only; use openai-chat for images")
        return "\n\n".join(m["content"] for m in prompt.messages)

    def build_request(self, prompt: Prompt, settings: GenerationSettings) -> Request:
        """The joined text, length, temperature and seed."""
        body = {
            "model": self.model,
            "prompt": self.context_text(prompt),
            "max_tokens": settings.max_new_tokens,
            "temperature": settings.temperature,
            "seed": settings.seed,
        }
        return self.endpoint, body

    def parse_response(self, body: dict[str, Any], prompt: Prompt) -> Completion:
        """The first choice's ``text`` and ``finish_reason``."""
        choice = self.choice(body)
        text = choice.get("text") or ""
        if not isinstance(text, str):
            raise self.malformed("'text' should be a string", text)
        return Completion(text=text, meta={"finish_reason": finish_reason(choice)})

    def build_logprob_requests(self, prompt: Prompt, settings: GenerationSettings) -> list[Request]:
        """Per option, ``context + option`` with ``echo`` (sent concurrently)."""
        ctx = self.context_text(prompt)
        return [
            (self.endpoint, _echo_body(self.model, ctx + o.scored_text)) for o in prompt.options
        ]

    def parse_logprob_responses(self, bodies: list[dict[str, Any]], prompt: Prompt) -> Completion:
        """Per option, the sum of its echoed prompt-token log-probabilities."""
        ctx = self.context_text(prompt)
        conts = [o.scored_text for o in prompt.options]
        scores = [self._echo_score(b, ctx, c) for b, c in zip(bodies, conts, strict=True)]
        return Completion(option_logprobs=tuple(scores))

    def _echo_score(self, body: dict[str, Any], ctx: str, cont: str) -> float:
        lp = self.choice(body).get("logprobs") or {}
        if not isinstance(lp, dict):
            raise self.malformed("'logprobs' should be an object", lp)
        offsets, values = lp.get("text_offset"), lp.get("token_logprobs")
        end = len(ctx) + len(cont)
        if not isinstance(offsets, list) or not isinstance(values, list):
            offsets = values = None
        elif not all(number(o) for o in offsets) or not all(v is None or number(v) for v in values):
            raise self.malformed("'text_offset'/'token_logprobs' should hold numbers", lp)
        if not offsets or not values:
            raise BackendError(
                f"{self.shown()} returned no prompt logprobs for echo=true: "
                "this server cannot score options; use --mode generate"
            )
        picked = [v for off, v in zip(offsets, values, strict=False) if len(ctx) <= off < end]
        if not picked or any(v is None for v in picked):
            raise BackendError(
                f"{self.shown()}: echoed logprobs do not cover the option "
                f"{cont!r}; the server does not echo prompt logprobs"
            )
        return float(sum(picked))


def _echo_body(model: str, text: str) -> dict[str, Any]:
    """A request scoring ``text``'s tokens (echoed with their log-probabilities)."""
    return {
        "model": model,
        "prompt": text,
        "max_tokens": 1,
        "temperature": 0.0,
        "echo": True,
        "logprobs": 1,
    }
