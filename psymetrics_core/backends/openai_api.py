"""The base of the OpenAI-compatible API backends (``openai_chat.py``: ``openai-chat``,
``openai_completions.py``: ``openai-completions``): transport, concurrency, retries, redaction.

Requests run concurrently (``concurrency``, default 8) with retries and exponential backoff on
transport errors, HTTP 429 and 5xx only, a per-request timeout, and token usage summed per run.
The API key is read from the environment variable named by ``api_key_env`` and is never stored.

``logprob`` mode: ``openai-chat`` asks for ``logprobs``/``top_logprobs`` of the first answer
token and reads each option's log-probability there; ``openai-completions`` sends
``context + option`` with ``echo`` and sums the option's prompt-token log-probabilities (the
way lm-eval's ``local-completions`` scores multiple choice). Servers that offer neither get a
clear error.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from psymetrics_core.backends.base import Backend, GenerationSettings, OnResult, Reporter
from psymetrics_core.backends.openai_args import (
    MODEL_ARGS,
    check_url,
    default_key_env,
    float_arg,
    int_arg,
    join_url,
    strip_endpoint,
)
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.redaction import redact_text, redact_url, secret_forms, url_secrets
from psymetrics_core.base.types import Completion, Prompt

__all__ = ["OpenAIBackend"]

_RETRY_STATUS = {408, 409, 429}


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OpenAIBackend(Backend):
    """Shared machinery: argument parsing, the async request loop, retries and usage."""

    name = "openai"
    endpoint = ""
    supports_concurrency = True  # concurrency = requests in flight
    accepts_on_result = True  # each response is handed to the cache as soon as it arrives
    chunk_size = 1_000_000  # the runner passes whole tasks; concurrency bounds what is in flight

    def __init__(self, model_args: dict[str, str]) -> None:
        args = dict(model_args)
        args.pop("variant", None)
        if "api_key" in args:
            raise BackendError(
                "do not put the key in --model-args; name its environment variable: "
                "api_key_env=NAME"
            )
        unknown = sorted(set(args) - {k for k, _ in MODEL_ARGS})
        if unknown:  # first: a mistyped key is named, not reported as a missing one
            raise BackendError(
                f"unknown --model-args for {self.name}: {', '.join(unknown)} (known: "
                f"{', '.join(k for k, _ in MODEL_ARGS)})"
            )
        self.base_url = args.pop("base_url", "").rstrip("/")
        self.model = args.pop("model", "")
        if not self.base_url or not self.model:
            raise BackendError(f"--model {self.name} needs --model-args base_url=URL,model=NAME")
        self.base_url = strip_endpoint(self.base_url)
        self._url_secrets = url_secrets(self.base_url)
        self.public_url = redact_url(self.base_url)
        check_url(self.base_url, self.public_url)
        self.api_key_env = args.pop("api_key_env", None) or default_key_env(self.base_url)
        self.concurrency = int_arg(args, "concurrency", 8, 1)
        self.max_retries = int_arg(args, "max_retries", 6, 0)
        self.timeout = float_arg(args, "timeout", 120.0, positive=True)
        self.deadline = float_arg(args, "deadline", 600.0, positive=True)
        self.top_logprobs = int_arg(args, "top_logprobs", 20, 1)
        self.backoff = float_arg(args, "backoff", 0.5)
        self.max_response_bytes = int_arg(args, "max_response_bytes", 64 * 1024 * 1024, 1024)
        self._connected = False  # a first connection failure is reported at once, not retried
        self._usage = {"requests": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self._usage_lock = threading.Lock()

    # -- public interface ----------------------------------------------------------------------

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

    def usage(self) -> dict[str, int]:
        """Requests, retries and tokens used so far by this backend object."""
        with self._usage_lock:
            out = dict(self._usage)
        out["total_tokens"] = out["prompt_tokens"] + out["completion_tokens"]
        return out

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
        on_result: OnResult | None = None,
    ) -> list[Completion]:
        """One completion per prompt, requested concurrently."""
        return self._run(prompts, settings, progress, on_result, self._generate_one)

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
        on_result: OnResult | None = None,
    ) -> list[Completion]:
        """Per prompt, each option's log-probability (see the module docstring)."""
        return self._run(prompts, settings, progress, on_result, self._logprob_one)

    # -- subclasses ----------------------------------------------------------------------------

    async def _generate_one(
        self, client: Any, prompt: Prompt, settings: GenerationSettings
    ) -> Completion:
        raise NotImplementedError

    async def _logprob_one(
        self, client: Any, prompt: Prompt, settings: GenerationSettings
    ) -> Completion:
        raise NotImplementedError

    # -- machinery -----------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise BackendError(
                    f"environment variable {self.api_key_env} (api_key_env) is unset"
                )
            if not key.isascii() or not key.isprintable() or " " in key:
                raise BackendError(
                    f"environment variable {self.api_key_env} (api_key_env) holds spaces, "
                    "line breaks or non-ASCII characters; it cannot be sent as a bearer key"
                )
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _key_note(self, status: int) -> str:
        """For a refused key (401/403): which environment variable psym read, if any."""
        if status not in (401, 403):
            return ""
        if self.api_key_env:
            return f" (psym sent the key from the environment variable {self.api_key_env})"
        return (
            " (psym sent no key: name the variable that holds it with "
            "--model-args api_key_env=VAR; OPENAI_API_KEY is read by default only for "
            "api.openai.com)"
        )

    def _secret_forms(self) -> list[str]:
        """The key (from ``api_key_env``) and URL credentials in every form a server may echo."""
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        try:
            user = urlsplit(self.base_url).username
        except ValueError:
            user = None
        return secret_forms([key, *self._url_secrets], user=user)

    def _redact(self, text: str) -> str:
        """``text`` (from a server or about a request) with every secret masked."""
        return redact_text(text.replace(self.base_url, self.public_url), self._secret_forms())

    def answer_mixed(
        self,
        requests: Sequence[tuple[Prompt, GenerationSettings]],
        on_result: OnResult,
    ) -> None:
        """Every request in one pool of ``concurrency`` requests in flight, whatever its
        settings (seed, mode, length), each handed to ``on_result`` as it arrives."""
        prompts = [p for p, _ in requests]
        per = [s for _, s in requests]

        def one(client: Any, prompt: Prompt, settings: GenerationSettings) -> Any:
            fn = self._logprob_one if settings.mode == "logprob" else self._generate_one
            return fn(client, prompt, settings)

        self._run(prompts, per, None, on_result, one)

    def _run(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings | Sequence[GenerationSettings],
        progress: Reporter | None,
        on_result: OnResult | None,
        one: Callable[..., Any],
    ) -> list[Completion]:
        if not prompts:
            return []
        per = [settings] * len(prompts) if isinstance(settings, GenerationSettings) else settings
        coro = self._run_async(prompts, per, progress, on_result, one)
        return list(run_sync(coro))

    async def _run_async(
        self,
        prompts: Sequence[Prompt],
        settings: Sequence[GenerationSettings],
        progress: Reporter | None,
        on_result: OnResult | None,
        one: Callable[..., Any],
    ) -> list[Completion]:
        import aiohttp  # on demand: about 0.1 s to import: only once a request is sent

        headers = self._headers()
        results: list[Completion | None] = [None] * len(prompts)
        sem = asyncio.Semaphore(self.concurrency)
        connector = aiohttp.TCPConnector(limit=self.concurrency)
        failed: list[BaseException] = []
        async with aiohttp.ClientSession(headers=headers, connector=connector) as client:

            async def work(i: int) -> None:
                async with sem:
                    if failed:  # after a fatal error start nothing new ...
                        return
                    try:
                        comp = await one(client, prompts[i], settings[i])
                    except Exception as exc:
                        failed.append(exc)
                        return
                try:  # ... but keep (and hand to the cache) every response already paid for
                    results[i] = comp
                    if on_result is not None:
                        on_result(i, comp)
                    if progress is not None:
                        progress.advance(1)
                except Exception as exc:
                    failed.append(exc)

            await asyncio.gather(*(work(i) for i in range(len(prompts))))
        if failed:
            raise next((e for e in failed if isinstance(e, BackendError)), failed[0])
        return [r for r in results if r is not None]

    async def _post(self, client: Any, body: dict[str, Any]) -> dict[str, Any]:
        """POST with retries on transport errors, 408/409/429 and 5xx; other errors fail.

        Every attempt and every wait fit in ``deadline`` seconds; a body over
        ``max_response_bytes`` is refused; no text from the server is shown unredacted.
        """
        import aiohttp  # on demand: about 0.1 s to import: only once a request is sent

        url = join_url(self.base_url, self.endpoint)
        shown = self._shown()
        loop = asyncio.get_running_loop()
        end = loop.time() + self.deadline
        for attempt in range(self.max_retries + 1):
            left = end - loop.time()
            try:
                if left <= 0:
                    raise TimeoutError("deadline passed")
                timeout = aiohttp.ClientTimeout(total=min(self.timeout, left))
                async with client.post(url, json=body, timeout=timeout) as resp:
                    raw = await _read_capped(resp, self.max_response_bytes)
                    status, retry_after = resp.status, _retry_after(resp.headers)
                if raw is None:
                    raise BackendError(
                        f"{shown}: response body is over {self.max_response_bytes:,} bytes "
                        "(max_response_bytes); refusing to read it"
                    )
                text = raw.decode("utf-8", errors="replace")
                self._connected = True
                if status in _RETRY_STATUS or status >= 500:
                    raise _Retryable(f"HTTP {status}", retry_after)
                if status >= 400:
                    raise BackendError(
                        f"{shown}: HTTP {status}: {self._redact(_error_text(text))}"
                        + self._key_note(status)
                    )
                data = json.loads(text)
            except aiohttp.InvalidURL:
                raise BackendError(f"{shown}: not a valid URL") from None
            except aiohttp.ClientConnectorError as exc:
                if not self._connected:
                    raise BackendError(
                        f"{shown}: cannot connect ({self._redact(str(exc.os_error or exc))}); "
                        "is the server running and base_url right?"
                    ) from None
                if self._give_up(attempt, end, loop.time()):
                    raise BackendError(
                        f"{shown}: gave up after {attempt + 1} attempts (cannot connect)"
                    ) from None
                await self._wait(attempt, None, end)
                continue
            except (aiohttp.ClientError, TimeoutError, _Retryable) as exc:
                if self._give_up(attempt, end, loop.time()):
                    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                    why = "" if attempt == self.max_retries else f", {self.deadline:g} s deadline"
                    raise BackendError(
                        f"{shown}: gave up after {attempt + 1} attempts{why} ({self._redact(what)})"
                    ) from None
                await self._wait(attempt, getattr(exc, "retry_after", None), end)
                continue
            except json.JSONDecodeError:
                raise BackendError(f"{shown}: response is not JSON") from None
            except ValueError as exc:  # e.g. aiohttp refusing a header or URL combination
                raise BackendError(f"{shown}: {self._redact(str(exc))}") from None
            if not isinstance(data, dict):
                raise BackendError(f"{shown}: response is not a JSON object")
            self._count(data)
            return data
        raise AssertionError("unreachable")

    def _give_up(self, attempt: int, end: float, now: float) -> bool:
        return attempt >= self.max_retries or now >= end

    async def _wait(self, attempt: int, retry_after: float | None, end: float) -> None:
        """Back off (or honour Retry-After), never past the deadline."""
        wait = retry_after
        if wait is None:
            wait = self.backoff * 2**attempt * (0.5 + random.random() / 2)
        with self._usage_lock:
            self._usage["retries"] += 1
        left = end - asyncio.get_running_loop().time()
        await asyncio.sleep(max(0.0, min(wait, 60.0, left)))

    def _count(self, data: dict[str, Any]) -> None:
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        with self._usage_lock:
            self._usage["requests"] += 1
            self._usage["prompt_tokens"] += _tokens(usage.get("prompt_tokens"))
            self._usage["completion_tokens"] += _tokens(usage.get("completion_tokens"))

    def _choice(self, data: dict[str, Any]) -> dict[str, Any]:
        choices = data.get("choices")
        where = f"{self._shown()}"
        if choices is None or choices == []:
            raise BackendError(f"{where}: response has no choices")
        if not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise BackendError(
                f"{where}: malformed response: 'choices' should be a list of objects, got "
                f"{_shape(choices)}"
            )
        return dict(choices[0])

    def _shown(self) -> str:
        """The endpoint URL as shown to users (credentials masked)."""
        return join_url(self.public_url, self.endpoint)

    def _malformed(self, what: str, value: Any) -> BackendError:
        return BackendError(f"{self._shown()}: malformed response: {what}, got {_shape(value)}")


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


async def _read_capped(resp: Any, cap: int) -> bytes | None:
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


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _tokens(x: Any) -> int:
    """A token count from ``usage`` (0 when absent or not a non-negative integer)."""
    return int(x) if _number(x) and math.isfinite(x) and x >= 0 else 0


def _finish(choice: dict[str, Any]) -> str | None:
    reason = choice.get("finish_reason")
    return reason if isinstance(reason, str) else None


def _shape(value: Any) -> str:
    """A short description of an unexpected JSON value (type and a clipped repr)."""
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"


def _error_text(body: str) -> str:
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
