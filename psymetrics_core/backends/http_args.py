"""The ``--model-args`` every HTTP backend takes (``HTTP_ARGS``) and their parsing with bounds,
and the URL helpers: the checks of ``base_url`` and the joining of an endpoint path to it."""

from __future__ import annotations

import math
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from psymetrics_core.base.bounds import bound
from psymetrics_core.base.errors import BackendError

__all__ = ["HTTP_ARGS", "check_url", "join_url", "int_arg", "float_arg"]

# the --model-args of every HTTPBackend (for ``register(..., args=HTTP_ARGS)``); the numbers'
# bounds are the rows ``--model-args KEY`` of base/bounds.py
HTTP_ARGS: tuple[tuple[str, str], ...] = (
    ("base_url", "the server's URL, e.g. http://127.0.0.1:8000/v1 (required)"),
    ("model", "the model name the server knows (required)"),
    ("api_key_env", "environment variable holding the key [default: the backend's own, if any]"),
    ("concurrency", "requests in flight [8]"),
    ("max_retries", "retries of 408/409/429/5xx and transport errors [6]"),
    ("timeout", "seconds per request [120]"),
    ("deadline", "seconds per request including retries [600]"),
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


def join_url(url: str, endpoint: str) -> str:
    """``url`` with ``/endpoint`` appended to its path (a query string stays at the end)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"{url}/{endpoint}"
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + endpoint))


def int_arg(args: dict[str, str], key: str, default: int, low: int) -> int:
    """``args[key]`` (removed from ``args``) as an integer of at least ``low``, within its
    bound; ``default`` when absent."""
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
    """``args[key]`` (removed from ``args``) as a finite number >= 0 (> 0 with ``positive``),
    within its bound; ``default`` when absent."""
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
