"""The ``--model-args`` and the server URL of the OpenAI-compatible backends: the accepted keys
(``MODEL_ARGS``, listed by ``psym plugins --backends``), their parsing with bounds, the URL checks
and the default key variable (``OPENAI_API_KEY`` for OpenAI's own API)."""

from __future__ import annotations

import math
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from psymetrics_core.base.bounds import bound
from psymetrics_core.base.errors import BackendError

__all__ = ["MODEL_ARGS", "check_url", "strip_endpoint", "join_url", "default_key_env", "int_arg",
           "float_arg"]  # fmt: skip


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


def check_url(url: str, shown: str) -> None:
    """A one-line error at once for a base_url that cannot work (no retries)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a bad port
    except ValueError as exc:
        raise BackendError(f"base_url {shown!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise BackendError(
            f"base_url {shown!r} must start with http:// or https:// "
            f"(got {parts.scheme + '://' if parts.scheme else 'no scheme'})"
        )
    if not parts.hostname:
        raise BackendError(f"base_url {shown!r} names no host")
    if any(c.isspace() for c in url):
        raise BackendError(f"base_url {shown!r} contains whitespace")


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


def join_url(url: str, endpoint: str) -> str:
    """``url`` with ``/endpoint`` appended to its path (a query string stays at the end)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"{url}/{endpoint}"
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + endpoint))


def default_key_env(base_url: str) -> str | None:
    """``OPENAI_API_KEY`` for OpenAI's own API (as the OpenAI SDK, lm-eval and llm read it);
    no key for other servers unless ``api_key_env`` names one."""
    try:
        host = urlsplit(base_url).hostname or ""
    except ValueError:
        return None
    return "OPENAI_API_KEY" if host == "api.openai.com" else None


def int_arg(args: dict[str, str], key: str, default: int, low: int) -> int:
    raw = args.pop(key, None)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BackendError(f"--model-args {key} must be an integer, got {raw!r}") from None
    if value < low:
        raise BackendError(f"--model-args {key} must be at least {low}, got {value}")
    return _bounded(key, value)


_N = TypeVar("_N", int, float)


def _bounded(key: str, value: _N) -> _N:
    """``value`` within the bound ``base/bounds.py`` declares for ``--model-args KEY``."""
    b = bound(f"--model-args {key}")
    if not b.holds(value):
        raise BackendError(b.message(value))
    return value


def float_arg(args: dict[str, str], key: str, default: float, positive: bool = False) -> float:
    raw = args.pop(key, None)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise BackendError(f"--model-args {key} must be a number, got {raw!r}") from None
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        want = "a positive number" if positive else "a number >= 0"
        raise BackendError(f"--model-args {key} must be {want}, got {raw!r}")
    return _bounded(key, value)
