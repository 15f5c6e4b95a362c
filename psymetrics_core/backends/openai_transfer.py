"""Calls of an OpenAI-compatible server outside the chat endpoint (the Batch API's ``files``
and ``batches``) with the bounds of every online request: ``timeout`` seconds in all, a reply of
at most ``max_response_bytes``, credentials masked and server text redacted in every error.

These are short control calls, so a server that stops talking is given up early: at most
``CONNECT_WAIT`` seconds to connect and ``REPLY_WAIT`` seconds of silence once the request
(with any upload) is sent, or between two parts of the reply (docs/reference/bounds.md).
"""

from __future__ import annotations

from psymetrics_core.backends.http import error_text, read_capped, run_sync
from psymetrics_core.backends.http_args import join_url
from psymetrics_core.backends.openai_api import OpenAIBackend
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.redaction import redact_text

__all__ = ["api_call", "holds_secret", "CONNECT_WAIT", "REPLY_WAIT"]

CONNECT_WAIT = 15.0  # seconds to open the connection
REPLY_WAIT = 15.0  # seconds of silence from the server once the request is sent


def api_call(
    be: OpenAIBackend,
    method: str,
    path: str,
    data: bytes | None = None,
    content_type: str = "application/json",
) -> bytes:
    """One request to ``base_url/path`` outside the chat endpoint (the Batch API's
    ``files`` and ``batches``), bounded like every online request: ``timeout`` seconds in
    all (connecting, uploading ``data``, the reply), ``CONNECT_WAIT`` to connect,
    ``REPLY_WAIT`` of silence after the request, and a reply of at most
    ``max_response_bytes``; no retries. Any failure is one ``BackendError`` naming the
    method and the endpoint (credentials masked, server text redacted)."""
    return bytes(run_sync(_api_async(be, method, path, data, content_type)))


async def _api_async(
    be: OpenAIBackend, method: str, path: str, data: bytes | None, content_type: str
) -> bytes:
    import aiohttp  # on demand, as in _run_async

    shown = f"{method} {join_url(be.public_url, path)}"
    headers = be._headers()
    if data is None:
        del headers["Content-Type"]
    else:
        headers["Content-Type"] = content_type
    wait, connect = min(be.timeout, REPLY_WAIT), min(be.timeout, CONNECT_WAIT)
    timeout = aiohttp.ClientTimeout(total=be.timeout, sock_connect=connect, sock_read=wait)
    try:
        async with aiohttp.ClientSession(headers=headers, timeout=timeout) as client:
            url = join_url(be.base_url, path)
            async with client.request(method, url, data=data) as resp:
                raw = await read_capped(resp, be.max_response_bytes)
                status = resp.status
    except aiohttp.ConnectionTimeoutError:
        raise BackendError(f"{shown}: no connection within {connect:g} s") from None
    except aiohttp.SocketTimeoutError:
        raise BackendError(
            f"{shown}: the server sent nothing for {wait:g} s (a Batch API call waits "
            f"{REPLY_WAIT:g} s for a reply, or the --model-args timeout if shorter)"
        ) from None
    except TimeoutError:
        raise BackendError(
            f"{shown}: no complete reply within the {be.timeout:g} s timeout (--model-args timeout)"
        ) from None
    except (aiohttp.ClientError, ValueError) as exc:
        what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise BackendError(f"{shown}: {be._redact(what)}") from None
    if raw is None:
        raise BackendError(
            f"{shown}: reply is over {be.max_response_bytes:,} bytes (max_response_bytes)"
        )
    if status >= 400:
        text = raw.decode("utf-8", errors="replace")
        raise BackendError(f"{shown}: HTTP {status}: {be._redact(error_text(text))}")
    return raw


def holds_secret(be: OpenAIBackend, text: str) -> bool:
    """Whether ``text`` (from a server) holds the API key or a URL credential."""
    return redact_text(text, be._secret_forms()) != text
