"""The ``openai-completions`` backend: ``/completions`` with the messages joined into one text;
``logprob`` mode sends ``context + option`` with ``echo`` and sums the option's prompt-token
log-probabilities (how lm-eval's ``local-completions`` scores multiple choice), so it scores
multi-token continuations. Transport, retries and redaction: :mod:`.openai_api`."""

from __future__ import annotations

import asyncio
from typing import Any

from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.backends.openai_api import OpenAIBackend, _finish, _number
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

    async def _generate_one(
        self, client: Any, prompt: Prompt, settings: GenerationSettings
    ) -> Completion:
        body = {
            "model": self.model,
            "prompt": self.context_text(prompt),
            "max_tokens": settings.max_new_tokens,
            "temperature": settings.temperature,
            "seed": settings.seed,
        }
        choice = self._choice(await self._post(client, body))
        text = choice.get("text") or ""
        if not isinstance(text, str):
            raise self._malformed("'text' should be a string", text)
        return Completion(text=text, meta={"finish_reason": _finish(choice)})

    async def _logprob_one(
        self, client: Any, prompt: Prompt, settings: GenerationSettings
    ) -> Completion:
        ctx = self.context_text(prompt)
        conts = [o.scored_text for o in prompt.options]
        scores = await asyncio.gather(*(self._echo_score(client, ctx, c) for c in conts))
        return Completion(option_logprobs=tuple(scores))

    async def _echo_score(self, client: Any, ctx: str, cont: str) -> float:
        body = {
            "model": self.model,
            "prompt": ctx + cont,
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": True,
            "logprobs": 1,
        }
        lp = self._choice(await self._post(client, body)).get("logprobs") or {}
        if not isinstance(lp, dict):
            raise self._malformed("'logprobs' should be an object", lp)
        offsets, values = lp.get("text_offset"), lp.get("token_logprobs")
        end = len(ctx) + len(cont)
        if not isinstance(offsets, list) or not isinstance(values, list):
            offsets = values = None
        elif not all(_number(o) for o in offsets) or not all(
            v is None or _number(v) for v in values
        ):
            raise self._malformed("'text_offset'/'token_logprobs' should hold numbers", lp)
        if not offsets or not values:
            raise BackendError(
                f"{self._shown()} returned no prompt logprobs for echo=true: "
                "this server cannot score options; use --mode generate"
            )
        picked = [v for off, v in zip(offsets, values, strict=False) if len(ctx) <= off < end]
        if not picked or any(v is None for v in picked):
            raise BackendError(
                f"{self._shown()}: echoed logprobs do not cover the option "
                f"{cont!r}; the server does not echo prompt logprobs"
            )
        return float(sum(picked))
