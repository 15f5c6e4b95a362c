"""One HTTP base for API backends (``HTTPBackend``): the transport, apart from the payload.

The base owns everything about sending JSON requests to a server: the connection pool and
``concurrency`` requests in flight, retries with exponential backoff (transport errors, HTTP
408/409/429 and 5xx only; ``Retry-After`` honoured), a per-request ``timeout`` and a
``deadline`` for all attempts and waits, a reply bounded by ``max_response_bytes``, the API key
read from the environment variable ``api_key_env`` and masked in every error (never stored),
token usage summed per run, and ``run_sync`` for calls from synchronous code (also inside a
running event loop, e.g. Jupyter). Its ``--model-args`` are ``HTTP_ARGS``.

A subclass maps prompts to one API's payloads and replies, nothing else:

- ``build_request(prompt, settings) -> (path, body)``: the endpoint path (joined to
  ``base_url``) and the JSON body of a generation;
- ``parse_response(body, prompt) -> Completion``: the reply as a completion;
- for ``--mode logprob`` (optional): ``build_logprob_requests(prompt, settings)`` (one or more
  requests, sent concurrently) and ``parse_logprob_responses(bodies, prompt)``;
- optional: ``auth_headers(key)`` (default ``Authorization: Bearer``), ``token_usage(body)``,
  ``default_key_env(base_url)``, ``normalize_url(url)``, ``configure(args)`` for its own
  ``--model-args`` (declared in ``model_args``), ``identity()``.

``openai-chat`` and ``openai-completions`` are such subclasses (``openai_chat.py``,
``openai_completions.py``); docs/plugins/http-backend.md builds an Anthropic Messages backend.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from psymetrics_core.backends.base import Backend, GenerationSettings, OnResult, Reporter
from psymetrics_core.backends.http_args import HTTP_ARGS, check_url, float_arg, int_arg, join_url
from psymetrics_core.backends.http_util import (
    _retry_after,
    error_text,
    number,
    read_capped,
    run_sync,
    shape,
    tokens,
)
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.redaction import redact_text, redact_url, secret_forms, url_secrets
from psymetrics_core.base.types import Completion, Prompt

__all__ = [
    "HTTPBackend",
    "HTTP_ARGS",
    "Request",
    "run_sync",
    "read_capped",
    "error_text",
    "number",
    "tokens",
    "shape",
]

Request = tuple[str, dict[str, Any]]  # (endpoint path under base_url, JSON body)

_RETRY_STATUS = {408, 409, 429}


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class HTTPBackend(Backend):
    """The transport of a JSON-over-HTTP model API; subclasses map payloads (module docstring)."""

    name = "http"
    endpoint = ""  # the usual path: shown in errors about the server
    model_args: tuple[tuple[str, str], ...] = HTTP_ARGS  # the --model-args accepted
    supports_concurrency = True  # concurrency = requests in flight
    accepts_on_result = True  # each response is handed to the cache as soon as it arrives
    chunk_size = 1_000_000  # the runner passes whole tasks; concurrency bounds what is in flight
    key_hint = ""  # appended to "psym sent no key ..." on HTTP 401/403

    def __init__(self, model_args: dict[str, str]) -> None:
        args = dict(model_args)
        args.pop("variant", None)
        if "api_key" in args:
            raise BackendError(
                "do not put the key in --model-args; name its environment variable: "
                "api_key_env=NAME"
            )
        known = [k for k, _ in self.model_args]
        unknown = sorted(set(args) - set(known))
        if unknown:  # first: a mistyped key is named, not reported as a missing one
            raise BackendError(
                f"unknown --model-args for {self.name}: {', '.join(unknown)} (known: "
                f"{', '.join(known)})"
            )
        self.base_url = args.pop("base_url", "").rstrip("/")
        self.model = args.pop("model", "")
        if not self.base_url or not self.model:
            raise BackendError(f"--model {self.name} needs --model-args base_url=URL,model=NAME")
        self.base_url = self.normalize_url(self.base_url)
        self._url_secrets = url_secrets(self.base_url)
        self.public_url = redact_url(self.base_url)
        check_url(self.base_url, self.public_url)
        self.api_key_env = args.pop("api_key_env", None) or self.default_key_env(self.base_url)
        self.concurrency = int_arg(args, "concurrency", 8, 1)
        self.max_retries = int_arg(args, "max_retries", 6, 0)
        self.timeout = float_arg(args, "timeout", 120.0, positive=True)
        self.deadline = float_arg(args, "deadline", 600.0, positive=True)
        self.configure(args)
        self.backoff = float_arg(args, "backoff", 0.5)
        self.max_response_bytes = int_arg(args, "max_response_bytes", 64 * 1024 * 1024, 1024)
        self._connected = False  # a first connection failure is reported at once, not retried
        self._usage = {"requests": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self._usage_lock = threading.Lock()

    # -- what subclasses implement -------------------------------------------------------------

    def configure(self, args: dict[str, str]) -> None:
        """Read (``args.pop``) the subclass's own ``--model-args`` (those beyond ``HTTP_ARGS``
        declared in ``model_args``); parse numbers with ``http_args.int_arg``/``float_arg``."""

    def build_request(self, prompt: Prompt, settings: GenerationSettings) -> Request:
        """The (path, JSON body) of one generation request."""
        raise NotImplementedError

    def parse_response(self, body: dict[str, Any], prompt: Prompt) -> Completion:
        """The completion in a reply's JSON object (raise ``self.malformed(...)`` if it is not
        the expected shape)."""
        raise NotImplementedError

    def build_logprob_requests(self, prompt: Prompt, settings: GenerationSettings) -> list[Request]:
        """The requests (sent concurrently) that score the prompt's options; default: refused."""
        raise BackendError(f"backend '{self.name}' cannot score options (use --mode generate)")

    def parse_logprob_responses(self, bodies: list[dict[str, Any]], prompt: Prompt) -> Completion:
        """Each option's log-probability from the replies, in the order of the requests."""
        raise NotImplementedError

    def logprob_error(self, exc: BackendError) -> BackendError:
        """The error shown when a logprob request fails (add a hint about the server)."""
        return exc

    def auth_headers(self, key: str) -> dict[str, str]:
        """The headers carrying the API key (default: ``Authorization: Bearer KEY``)."""
        return {"Authorization": f"Bearer {key}"}

    def token_usage(self, body: dict[str, Any]) -> tuple[int, int]:
        """(prompt tokens, completion tokens) a reply reports (default: none)."""
        return 0, 0

    def default_key_env(self, base_url: str) -> str | None:
        """The key variable read when ``api_key_env`` is not given (default: none)."""
        return None

    def normalize_url(self, url: str) -> str:
        """``base_url`` as the backend uses it (e.g. with a pasted endpoint path removed)."""
        return url

    # -- the Backend contract ------------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        """Backend, endpoint and model name (the API key never appears here)."""
        return {
            "backend": self.name,
            "base_url": self.public_url,
            "model": self.model,
            "endpoint": self.endpoint,
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
        """Per prompt, each option's log-probability (``build_logprob_requests``)."""
        return self._run(prompts, settings, progress, on_result, self._logprob_one)

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

    # -- one prompt ----------------------------------------------------------------------------

    async def _generate_one(
        self, client: Any, prompt: Prompt, settings: GenerationSettings
    ) -> Completion:
        path, body = self.build_request(prompt, settings)
        return self.parse_response(await self.post(client, path, body), prompt)

    async def _logprob_one(
        self, client: Any, prompt: Prompt, settings: GenerationSettings
    ) -> Completion:
        requests = self.build_logprob_requests(prompt, settings)
        try:
            bodies = await asyncio.gather(*(self.post(client, p, b) for p, b in requests))
        except BackendError as exc:
            raise self.logprob_error(exc) from None
        return self.parse_logprob_responses(list(bodies), prompt)

    # -- errors and secrets --------------------------------------------------------------------

    def shown(self, path: str | None = None) -> str:
        """The endpoint URL as shown to users (credentials masked)."""
        return join_url(self.public_url, self.endpoint if path is None else path)

    def malformed(self, what: str, value: Any) -> BackendError:
        """The error for a reply that is not the expected shape: ``what`` was expected."""
        return BackendError(f"{self.shown()}: malformed response: {what}, got {shape(value)}")

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
            headers.update(self.auth_headers(key))
        return headers

    def _key_note(self, status: int) -> str:
        """For a refused key (401/403): which environment variable psym read, if any."""
        if status not in (401, 403):
            return ""
        if self.api_key_env:
            return f" (psym sent the key from the environment variable {self.api_key_env})"
        return (
            " (psym sent no key: name the variable that holds it with "
            f"--model-args api_key_env=VAR{self.key_hint})"
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

    # -- the request loop ----------------------------------------------------------------------

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

    async def post(self, client: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``base_url/path`` with retries on transport errors, 408/409/429 and
        5xx; other errors fail. Every attempt and every wait fit in ``deadline`` seconds; a
        body over ``max_response_bytes`` is refused; no text from the server is shown
        unredacted. Returns the reply's JSON object."""
        import aiohttp  # on demand: about 0.1 s to import: only once a request is sent

        url = join_url(self.base_url, path)
        shown = self.shown(path)
        loop = asyncio.get_running_loop()
        end = loop.time() + self.deadline
        for attempt in range(self.max_retries + 1):
            left = end - loop.time()
            try:
                if left <= 0:
                    raise TimeoutError("deadline passed")
                timeout = aiohttp.ClientTimeout(total=min(self.timeout, left))
                async with client.post(url, json=body, timeout=timeout) as resp:
                    raw = await read_capped(resp, self.max_response_bytes)
                    status, retry_after = resp.status, _retry_after(resp.headers)
                data = self._reply(shown, raw, status, retry_after)
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
            except ValueError as exc:  # e.g. aiohttp refusing a header or URL combination
                raise BackendError(f"{shown}: {self._redact(str(exc))}") from None
            self._count(data)
            return data
        raise AssertionError("unreachable")

    def _reply(
        self, shown: str, raw: bytes | None, status: int, retry_after: float | None
    ) -> dict[str, Any]:
        """The JSON object of a reply; ``_Retryable`` for a status worth retrying."""
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
                f"{shown}: HTTP {status}: {self._redact(error_text(text))}" + self._key_note(status)
            )
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            raise BackendError(f"{shown}: response is not JSON") from None
        if not isinstance(data, dict):
            raise BackendError(f"{shown}: response is not a JSON object")
        return data

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
        prompt_tokens, completion_tokens = self.token_usage(data)
        with self._usage_lock:
            self._usage["requests"] += 1
            self._usage["prompt_tokens"] += prompt_tokens
            self._usage["completion_tokens"] += completion_tokens
