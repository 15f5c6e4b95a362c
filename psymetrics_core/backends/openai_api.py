"""What the OpenAI-compatible backends share (``openai_chat.py``: ``openai-chat``,
``openai_completions.py``: ``openai-completions``) on top of the HTTP base (``http.py``: pool,
concurrency, retries, deadline, redaction, bounded replies): their ``--model-args``
(``MODEL_ARGS``: the base's plus ``top_logprobs``), ``OPENAI_API_KEY`` for OpenAI's own API, a
pasted ``/chat/completions`` stripped from ``base_url``, ``usage`` and ``choices`` as OpenAI
replies carry them.

``logprob`` mode: ``openai-chat`` asks for ``logprobs``/``top_logprobs`` of the first answer
token and reads each option's log-probability there; ``openai-completions`` sends
``context + option`` with ``echo`` and sums the option's prompt-token log-probabilities (the
way lm-eval's ``local-completions`` scores multiple choice). Servers that offer neither get a
clear error.
"""

from __future__ import annotations

from typing import Any

from psymetrics_core.backends.http import HTTPBackend, shape, tokens
from psymetrics_core.backends.http_args import int_arg
from psymetrics_core.backends.openai_args import MODEL_ARGS, default_key_env, strip_endpoint
from psymetrics_core.base.errors import BackendError

__all__ = ["OpenAIBackend", "finish_reason"]


class OpenAIBackend(HTTPBackend):
    """The OpenAI API's arguments, key, URL and reply shape (``choices``, ``usage``)."""

    name = "openai"
    model_args = MODEL_ARGS
    key_hint = "; OPENAI_API_KEY is read by default only for api.openai.com"

    def configure(self, args: dict[str, str]) -> None:
        """``top_logprobs``: the alternatives asked for in logprob mode."""
        self.top_logprobs = int_arg(args, "top_logprobs", 20, 1)

    def default_key_env(self, base_url: str) -> str | None:
        """``OPENAI_API_KEY`` for api.openai.com, else none."""
        return default_key_env(base_url)

    def normalize_url(self, url: str) -> str:
        """``url`` without a pasted ``/chat/completions`` or ``/completions``."""
        return strip_endpoint(url)

    def token_usage(self, body: dict[str, Any]) -> tuple[int, int]:
        """``usage.prompt_tokens`` and ``usage.completion_tokens``."""
        usage = body.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return tokens(usage.get("prompt_tokens")), tokens(usage.get("completion_tokens"))

    def identity(self) -> dict[str, Any]:
        """Backend, endpoint and model name (the API key never appears here)."""
        return {
            "backend": self.name,
            "base_url": self.public_url,
            "model": self.model,
            "endpoint": self.endpoint,
            "top_logprobs": self.top_logprobs,
            "concurrency": self.concurrency,
        }

    def choice(self, data: dict[str, Any]) -> dict[str, Any]:
        """The first of the reply's ``choices``."""
        choices = data.get("choices")
        where = f"{self.shown()}"
        if choices is None or choices == []:
            raise BackendError(f"{where}: response has no choices")
        if not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise BackendError(
                f"{where}: malformed response: 'choices' should be a list of objects, got "
                f"{shape(choices)}"
            )
        return dict(choices[0])


def finish_reason(choice: dict[str, Any]) -> str | None:
    """A choice's ``finish_reason`` (None when absent or not a string)."""
    reason = choice.get("finish_reason")
    return reason if isinstance(reason, str) else None
