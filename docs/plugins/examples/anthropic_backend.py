"""psymetrics plugin: an Anthropic-Messages-style backend (``--model anthropic-messages``).

Built on the HTTP base: the base sends the requests (pool, concurrency, retries with backoff,
deadline, key redaction, bounded replies); this module only maps a psymetrics prompt to a
Messages request and the reply back to a completion. Register it under the ``psymetrics``
entry-point group, then::

    export ANTHROPIC_API_KEY=...
    psym eval --tasks bfi --mode generate --model anthropic-messages \
        --model-args base_url=https://api.anthropic.com/v1,model=claude-sonnet-4-5
"""

from __future__ import annotations

from typing import Any

from psymetrics_core import (
    HTTP_ARGS,
    Completion,
    GenerationSettings,
    HTTPBackend,
    Prompt,
    hookimpl,
)

API_VERSION = "2023-06-01"  # the anthropic-version header the Messages API requires


class AnthropicMessagesBackend(HTTPBackend):
    """``POST {base_url}/messages``: the system message apart, the chat turns as they are."""

    name = "anthropic-messages"
    endpoint = "messages"
    supports_logprobs = False  # the Messages API returns no log-probabilities

    def default_key_env(self, base_url: str) -> str | None:
        """The variable read when ``api_key_env`` is not given."""
        return "ANTHROPIC_API_KEY"

    def auth_headers(self, key: str) -> dict[str, str]:
        """The key goes in ``x-api-key`` (not ``Authorization``), with the API version."""
        return {"x-api-key": key, "anthropic-version": API_VERSION}

    def build_request(self, prompt: Prompt, settings: GenerationSettings) -> tuple[str, dict]:
        """System text in ``system``; user and assistant turns in ``messages``."""
        system = [m["content"] for m in prompt.messages if m["role"] == "system"]
        turns = [dict(m) for m in prompt.messages if m["role"] != "system"]
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": settings.max_new_tokens,
            "temperature": settings.temperature,
            "messages": turns,
        }
        if system:
            body["system"] = "\n\n".join(system)
        return self.endpoint, body

    def parse_response(self, body: dict[str, Any], prompt: Prompt) -> Completion:
        """The text blocks of ``content`` joined; ``stop_reason`` kept as the finish reason."""
        content = body.get("content")
        if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            raise self.malformed("'content' should be a list of blocks", content)
        texts = [b.get("text") for b in content if b.get("type") == "text"]
        if not all(isinstance(t, str) for t in texts):
            raise self.malformed("a text block's 'text' should be a string", texts)
        stop = body.get("stop_reason")
        meta = {"finish_reason": stop if isinstance(stop, str) else None}
        return Completion(text="".join(texts), meta=meta)

    def token_usage(self, body: dict[str, Any]) -> tuple[int, int]:
        """``usage.input_tokens`` and ``usage.output_tokens`` (0 when absent)."""
        usage = body.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))


def _count(value: Any) -> int:
    """A token count from the reply, or 0 when it is not a non-negative integer."""
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if ok else 0


@hookimpl
def register_backends(register):
    register(
        "anthropic-messages",
        AnthropicMessagesBackend,
        "Anthropic-style /messages: base_url=URL,model=NAME[,api_key_env=VAR]",
        args=HTTP_ARGS,
    )
