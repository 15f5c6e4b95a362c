"""The helpers of the HTTP base (``http.py``) that hold no state: reading a reply within a
byte bound, its ``Retry-After``, its error message, numbers from its JSON, and ``run_sync``."""

from __future__ import annotations

import asyncio
import json
import math
import threading
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

__all__ = ["read_capped", "error_text", "run_sync", "number", "tokens", "shape"]


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date."""
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(str(value))
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


async def read_capped(resp: Any, cap: int) -> bytes | None:
    """The response body, or None when it is longer than ``cap`` bytes (read no further)."""
    length = resp.content_length
    if length is not None and length > cap:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def number(x: Any) -> bool:
    """Whether ``x`` (from JSON) is a number (``true``/``false`` are not)."""
    return isinstance(x, int | float) and not isinstance(x, bool)


def tokens(x: Any) -> int:
    """A token count from a reply's usage (0 when absent or not a non-negative number)."""
    return int(x) if number(x) and math.isfinite(x) and x >= 0 else 0


def shape(value: Any) -> str:
    """A short description of an unexpected JSON value (type and a clipped repr)."""
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"


def error_text(body: str) -> str:
    """The message of an error reply (``{"error": {"message": ...}}`` or the text), clipped."""
    try:
        data = json.loads(body)
        err = data.get("error", data) if isinstance(data, dict) else data
        msg = err.get("message", err) if isinstance(err, dict) else err
        text = str(msg)
    except ValueError:
        text = body
    return " ".join(text.split())[:300]


def run_sync(coro: Any) -> Any:
    """Run ``coro`` to completion from synchronous code; from inside a running event loop
    (e.g. Jupyter) in a thread of its own. Its exception is raised here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(_capture(coro)))
    thread.start()
    thread.join()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def _capture(coro: Any) -> Any:
    try:
        return asyncio.run(coro)
    except BaseException as exc:  # re-raised in the calling thread
        return exc
