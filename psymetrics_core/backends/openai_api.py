"""OpenAI-compatible API backends: ``openai-chat`` and ``openai-completions``.

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
from typing import Any

from ..errors import BackendError
from ..types import Completion, Prompt
from .base import GenerationSettings, Reporter

__all__ = ["OpenAIBackend", "OpenAIChatBackend", "OpenAICompletionsBackend"]

OnResult = Callable[[int, Completion], None]
_RETRY_STATUS = {408, 409, 429}


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OpenAIBackend:
    """Shared machinery: argument parsing, the async request loop, retries and usage."""

    name = "openai"
    endpoint = ""
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
        self.base_url = args.pop("base_url", "").rstrip("/")
        self.model = args.pop("model", "")
        if not self.base_url or not self.model:
            raise BackendError(f"--model {self.name} needs --model-args base_url=URL,model=NAME")
        for suffix in ("/chat/completions", "/completions"):
            if self.base_url.endswith(suffix):
                self.base_url = self.base_url[: -len(suffix)]
        self.api_key_env = args.pop("api_key_env", None)
        self.concurrency = _int(args, "concurrency", 8, 1)
        self.max_retries = _int(args, "max_retries", 6, 0)
        self.timeout = _float(args, "timeout", 120.0)
        self.top_logprobs = _int(args, "top_logprobs", 20, 1)
        self.backoff = _float(args, "backoff", 0.5)
        if args:
            raise BackendError(
                f"unknown --model-args for {self.name}: {', '.join(sorted(args))} (known: "
                "base_url, model, api_key_env, concurrency, max_retries, timeout, "
                "top_logprobs, backoff)"
            )
        self._usage = {"requests": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self._usage_lock = threading.Lock()

    # -- public interface ----------------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        """Backend, endpoint and model name (the API key never appears here)."""
        return {
            "backend": self.name,
            "base_url": self.base_url,
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
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _run(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None,
        on_result: OnResult | None,
        one: Callable[..., Any],
    ) -> list[Completion]:
        if not prompts:
            return []
        coro = self._run_async(prompts, settings, progress, on_result, one)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coro)
        box: list[Any] = []  # called from inside an event loop (e.g. Jupyter): use a thread
        thread = threading.Thread(target=lambda: box.append(_capture(coro)))
        thread.start()
        thread.join()
        if isinstance(box[0], BaseException):
            raise box[0]
        return list(box[0])

    async def _run_async(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None,
        on_result: OnResult | None,
        one: Callable[..., Any],
    ) -> list[Completion]:
        import aiohttp

        headers = self._headers()
        results: list[Completion | None] = [None] * len(prompts)
        sem = asyncio.Semaphore(self.concurrency)
        connector = aiohttp.TCPConnector(limit=self.concurrency)
        async with aiohttp.ClientSession(
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=self.timeout),
            connector=connector,
        ) as client:

            async def work(i: int) -> None:
                async with sem:
                    comp = await one(client, prompts[i], settings)
                results[i] = comp
                if on_result is not None:
                    on_result(i, comp)
                if progress is not None:
                    progress.advance(1)

            try:
                async with asyncio.TaskGroup() as tg:
                    for i in range(len(prompts)):
                        tg.create_task(work(i))
            except BaseExceptionGroup as group:
                raise _first_error(group) from None
        return [r for r in results if r is not None]

    async def _post(self, client: Any, body: dict[str, Any]) -> dict[str, Any]:
        """POST with retries on transport errors, 408/409/429 and 5xx; other errors fail."""
        import aiohttp

        url = f"{self.base_url}/{self.endpoint}"
        for attempt in range(self.max_retries + 1):
            try:
                async with client.post(url, json=body) as resp:
                    text = await resp.text()
                    status, retry_after = resp.status, _retry_after(resp.headers)
                if status in _RETRY_STATUS or status >= 500:
                    raise _Retryable(f"HTTP {status}", retry_after)
                if status >= 400:
                    raise BackendError(f"{url}: HTTP {status}: {_error_text(text)}")
                data = json.loads(text)
            except (aiohttp.ClientError, TimeoutError, _Retryable) as exc:
                if attempt == self.max_retries:
                    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                    raise BackendError(
                        f"{url}: gave up after {attempt + 1} attempts ({what})"
                    ) from None
                wait = getattr(exc, "retry_after", None)
                if wait is None:
                    wait = self.backoff * 2**attempt * (0.5 + random.random() / 2)
                with self._usage_lock:
                    self._usage["retries"] += 1
                await asyncio.sleep(min(wait, 60.0))
                continue
            except ValueError as exc:
                raise BackendError(f"{url}: response is not JSON") from exc
            if not isinstance(data, dict):
                raise BackendError(f"{url}: response is not a JSON object")
            self._count(data)
            return data
        raise AssertionError("unreachable")

    def _count(self, data: dict[str, Any]) -> None:
        usage = data.get("usage") or {}
        with self._usage_lock:
            self._usage["requests"] += 1
            self._usage["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
            self._usage["completion_tokens"] += int(usage.get("completion_tokens") or 0)

    def _choice(self, data: dict[str, Any]) -> dict[str, Any]:
        choices = data.get("choices") or []
        if not choices:
            raise BackendError(f"{self.base_url}/{self.endpoint}: response has no choices")
        return dict(choices[0])


def chat_messages(prompt: Prompt) -> list[dict[str, Any]]:
    """The prompt's messages; its images become ``image_url`` data-URL content parts of the
    last user message (after its text)."""
    messages: list[dict[str, Any]] = [dict(m) for m in prompt.messages]
    if not prompt.images:
        return messages
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    parts: list[dict[str, Any]] = [{"type": "text", "text": messages[last]["content"]}]
    parts += [{"type": "image_url", "image_url": {"url": im.data_url()}} for im in prompt.images]
    messages[last] = {"role": "user", "content": parts}
    return messages


class OpenAIChatBackend(OpenAIBackend):
    """``/chat/completions``: the prompt's chat messages as they are (images as data URLs)."""

    name = "openai-chat"
    endpoint = "chat/completions"
    supports_images = True  # whether the served model reads them is the server's business

    async def _generate_one(
        self, client: Any, prompt: Prompt, settings: GenerationSettings
    ) -> Completion:
        body = {
            "model": self.model,
            "messages": chat_messages(prompt),
            "max_tokens": settings.max_new_tokens,
            "temperature": settings.temperature,
            "seed": settings.seed,
        }
        choice = self._choice(await self._post(client, body))
        text = (choice.get("message") or {}).get("content") or ""
        return Completion(text=text, meta={"finish_reason": choice.get("finish_reason")})

    async def _logprob_one(
        self, client: Any, prompt: Prompt, settings: GenerationSettings
    ) -> Completion:
        body = {
            "model": self.model,
            "messages": chat_messages(prompt),
            "max_tokens": 1,
            "temperature": 0.0,
            "seed": settings.seed,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        try:
            choice = self._choice(await self._post(client, body))
        except BackendError as exc:
            if "HTTP 4" in str(exc):
                raise BackendError(
                    f"{exc} -- this server may not offer logprobs on chat completions; use "
                    "--mode generate, or --model openai-completions if it echoes prompt logprobs"
                ) from None
            raise
        content = (choice.get("logprobs") or {}).get("content") or []
        if not content or content[0].get("top_logprobs") is None:
            raise BackendError(
                f"{self.base_url}/{self.endpoint} returned no top_logprobs: the server does not "
                "offer logprobs for chat; use --mode generate, or --model openai-completions"
            )
        top = content[0]["top_logprobs"]
        return _options_from_top(prompt, top, str(content[0].get("token", "")))


class OpenAICompletionsBackend(OpenAIBackend):
    """``/completions``: messages joined into one text; ``logprob`` mode needs prompt echo."""

    name = "openai-completions"
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
        return Completion(
            text=str(choice.get("text") or ""), meta={"finish_reason": choice.get("finish_reason")}
        )

    async def _logprob_one(
        self, client: Any, prompt: Prompt, settings: GenerationSettings
    ) -> Completion:
        ctx = self.context_text(prompt)
        conts = [str(o.value) for o in prompt.options]
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
        offsets, values = lp.get("text_offset"), lp.get("token_logprobs")
        end = len(ctx) + len(cont)
        if not offsets or not values:
            raise BackendError(
                f"{self.base_url}/{self.endpoint} returned no prompt logprobs for echo=true: "
                "this server cannot score options; use --mode generate"
            )
        picked = [v for off, v in zip(offsets, values, strict=False) if len(ctx) <= off < end]
        if not picked or any(v is None for v in picked):
            raise BackendError(
                f"{self.base_url}/{self.endpoint}: echoed logprobs do not cover the option "
                f"{cont!r}; the server does not echo prompt logprobs"
            )
        return float(sum(picked))


def _options_from_top(prompt: Prompt, top: list[dict[str, Any]], token: str) -> Completion:
    """Each option's log-probability among the first token's alternatives (-inf if absent)."""
    by_option: dict[str, list[float]] = {}
    for alt in top:
        by_option.setdefault(str(alt.get("token", "")).strip(), []).append(float(alt["logprob"]))
    scores = []
    for o in prompt.options:
        found = by_option.get(str(o.value))
        scores.append(_logsumexp(found) if found else float("-inf"))
    missing = [o.value for o, s in zip(prompt.options, scores, strict=True) if math.isinf(s)]
    meta = {"token": token, "missing_options": missing}
    if len(missing) == len(scores):  # no option among the alternatives: nothing to score
        return Completion(text="", meta=meta)
    return Completion(option_logprobs=tuple(scores), meta=meta)


def _logsumexp(xs: list[float]) -> float:
    top = max(xs)
    return top + math.log(sum(math.exp(x - top) for x in xs))


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _error_text(body: str) -> str:
    try:
        data = json.loads(body)
        err = data.get("error", data) if isinstance(data, dict) else data
        msg = err.get("message", err) if isinstance(err, dict) else err
        text = str(msg)
    except ValueError:
        text = body
    return " ".join(text.split())[:300]


def _first_error(group: BaseExceptionGroup) -> BaseException:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            return _first_error(exc)
        if isinstance(exc, BackendError):
            return exc
    return group.exceptions[0]


def _capture(coro: Any) -> Any:
    try:
        return asyncio.run(coro)
    except BaseException as exc:  # re-raised in the calling thread
        return exc


def _int(args: dict[str, str], key: str, default: int, low: int) -> int:
    raw = args.pop(key, None)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BackendError(f"--model-args {key} must be an integer, got {raw!r}") from None
    if value < low:
        raise BackendError(f"--model-args {key} must be at least {low}, got {value}")
    return value


def _float(args: dict[str, str], key: str, default: float) -> float:
    raw = args.pop(key, None)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise BackendError(f"--model-args {key} must be a number, got {raw!r}") from None
