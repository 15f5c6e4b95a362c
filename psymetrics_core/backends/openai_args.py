"""The ``--model-args`` of the OpenAI-compatible backends (``MODEL_ARGS``, listed by
``psym plugins --backends``: the HTTP base's ``HTTP_ARGS`` plus ``top_logprobs``), the endpoint
suffix stripped from a pasted URL and the default key variable (``OPENAI_API_KEY`` for OpenAI's
own API). Their parsing and the URL checks are the HTTP base's (``http_args.py``)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["MODEL_ARGS", "COMPLETIONS_ARGS", "strip_endpoint", "default_key_env"]


# the --model-args of the OpenAI-compatible backends, for ``psym plugins --backends``
MODEL_ARGS: tuple[tuple[str, str], ...] = (
    ("base_url", "the server's URL, e.g. http://127.0.0.1:8000/v1 (required)"),
    ("model", "the model name the server knows (required)"),
    (
        "api_key_env",
        "environment variable holding the key [default: OPENAI_API_KEY for "
        "api.openai.com, else none]",
    ),
    ("concurrency", "requests in flight [8]"),
    ("max_retries", "retries of 408/409/429/5xx and transport errors [6]"),
    ("timeout", "seconds per request [120]"),
    ("deadline", "seconds per request including retries [600]"),
    ("top_logprobs", "alternatives asked for in logprob mode [20]"),
    ("backoff", "first retry delay in seconds, doubled each time [0.5]"),
    ("max_response_bytes", "largest reply accepted [67108864]"),
)

# openai-completions' own: a client-side chat template and vLLM's prompt_logprobs
COMPLETIONS_ARGS: tuple[tuple[str, str], ...] = (
    *MODEL_ARGS,
    (
        "chat_template",
        "the model's chat template: a Jinja file, its GGUF file or tokenizer_config.json; "
        "needed to score whole replies (value-portrait) [none: messages joined]",
    ),
    ("prompt_logprobs", "true: also ask vLLM's prompt_logprobs extension [false]"),
)


def strip_endpoint(url: str) -> str:
    """``url`` without a trailing ``/chat/completions`` or ``/completions`` in its path."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    return urlunsplit(parts._replace(path=path))


def default_key_env(base_url: str) -> str | None:
    """``OPENAI_API_KEY`` for OpenAI's own API (as the OpenAI SDK, lm-eval and llm read it);
    no key for other servers unless ``api_key_env`` names one."""
    try:
        host = urlsplit(base_url).hostname or ""
    except ValueError:
        return None
    return "OPENAI_API_KEY" if host == "api.openai.com" else None
