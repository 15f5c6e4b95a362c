"""Sends probe prompts through the core pipeline pieces: the (cached) backend, ``call_backend``
and the response cache, so a second run makes no model calls and a killed run repeats none of
its finished prompts.

Text prompts go through ``call_backend`` in ``generate`` mode. An order-test prompt asks for
the log-likelihood of a continuation; it is expressed as a core ``Prompt`` whose single option's
label is the continuation, keyed in the response cache like any ``logprob`` request, and scored
by the backend's ``loglikelihoods(context, continuations)`` (local transformers models) or
prompt-echo logprobs (OpenAI-compatible ``/completions``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from psymetrics_core.backends.base import GenerationSettings, Reporter, call_backend
from psymetrics_core.errors import BackendError
from psymetrics_core.types import Completion, Option, Prompt

from .prompts import ProbePrompt
from .scoring import Answered

__all__ = ["core_prompt", "answer_prompts", "check_loglik", "CHUNK"]

CHUNK = 8  # prompts per backend call; samples are written after each chunk


def core_prompt(p: ProbePrompt) -> Prompt:
    """The core ``Prompt`` of a probe prompt: one user message (plus, for a log-likelihood
    request, one option whose label is the scored continuation)."""
    options = (Option(0, p.continuation),) if p.mode == "loglik" and p.continuation else ()
    return Prompt(messages=({"role": "user", "content": p.text},), options=options, text=p.text)


def _loglik_fn(be: Any) -> Callable[[Prompt], float]:
    """How the (unwrapped) backend scores one continuation after a prompt's messages."""
    if hasattr(be, "loglikelihoods") and hasattr(be, "context_text"):
        return lambda pr: float(be.loglikelihoods(be.context_text(pr), [pr.options[0].label])[0])
    if hasattr(be, "_echo_score") and hasattr(be, "context_text"):

        async def one(pr: Prompt) -> float:
            import aiohttp

            async with aiohttp.ClientSession() as client:
                return float(await be._echo_score(client, be.context_text(pr), pr.options[0].label))

        return lambda pr: asyncio.run(one(pr))
    raise BackendError(
        f"backend '{getattr(be, 'name', type(be).__name__)}' cannot score a continuation's "
        "log-likelihood; run the order probe with a local model (smollm2, hf) or "
        "openai-completions, or leave it out of --probes"
    )


def check_loglik(be: Any) -> None:
    """One-line error, before any model call, when ``be`` cannot score log-likelihoods."""
    from psymetrics_core.cache import CachedBackend

    inner = be.backend if isinstance(be, CachedBackend) else be
    _loglik_fn(getattr(inner, "obj", inner))


def _loglik(be: Any, prompts: Sequence[Prompt], settings: GenerationSettings,
            reporter: Reporter | None) -> list[Completion]:  # fmt: skip
    """Log-likelihoods through the response cache when ``be`` is a ``CachedBackend``."""
    from psymetrics_core.cache import CachedBackend, request_key

    inner = be.backend if isinstance(be, CachedBackend) else be
    inner = getattr(inner, "obj", inner)  # a non-Backend object adapted by as_backend
    score = _loglik_fn(inner)
    if not isinstance(be, CachedBackend):
        out = []
        for pr in prompts:
            out.append(Completion(option_logprobs=(score(pr),)))
            if reporter is not None:
                reporter.advance(1)
        return out
    keys = [request_key(be.identity_for_key, pr, settings) for pr in prompts]
    found = be.cache.get_many(keys)
    result = []
    for key, pr in zip(keys, prompts, strict=True):
        if key in found:
            be.hits += 1
            comp = found[key]
        else:
            be.misses += 1
            comp = Completion(option_logprobs=(score(pr),))
            be.cache.put(key, be.label, "logprob", comp)
        result.append(comp)
        if reporter is not None:
            reporter.advance(1)
    return result


def answer_prompts(
    be: Any,
    prompts: Sequence[ProbePrompt],
    seed: int,
    on_answers: Callable[[list[Answered]], None],
    reporter: Reporter | None = None,
) -> list[Answered]:
    """Answer every prompt (in chunks of prompts that share settings), calling ``on_answers``
    after each chunk so its samples are written before the next model call.

    Identical requests (e.g. two items whose masked text is the same) are sent once; every
    prompt sharing them gets the answer in the same chunk.
    """
    size = int(getattr(be, "chunk_size", CHUNK) or CHUNK)
    groups: dict[tuple[Any, ...], list[ProbePrompt]] = {}
    for p in prompts:
        groups.setdefault((p.mode, p.text, p.continuation, p.max_new_tokens), []).append(p)
    unique = [g[0] for g in groups.values()]
    twins = {id(g[0]): g for g in groups.values()}

    collected: list[Answered] = []

    def fan_out(answered: list[Answered]) -> None:
        every = [
            Answered(twin, text=a.text, loglik=a.loglik)
            for a in answered
            for twin in twins[id(a.prompt)]
        ]
        collected.extend(every)
        on_answers(every)
        if reporter is not None:
            extra = sum(len(twins[id(a.prompt)]) - 1 for a in answered)
            if extra:
                reporter.advance(extra)

    _answer_unique(be, unique, seed, fan_out, reporter, size)
    return collected


def _answer_unique(
    be: Any,
    prompts: Sequence[ProbePrompt],
    seed: int,
    on_answers: Callable[[list[Answered]], None],
    reporter: Reporter | None,
    size: int,
) -> list[Answered]:
    out: list[Answered] = []
    i = 0
    while i < len(prompts):
        first = prompts[i]
        chunk = [first]
        while (
            i + len(chunk) < len(prompts)
            and len(chunk) < size
            and prompts[i + len(chunk)].mode == first.mode
            and prompts[i + len(chunk)].max_new_tokens == first.max_new_tokens
        ):
            chunk.append(prompts[i + len(chunk)])
        cps = [core_prompt(p) for p in chunk]
        if first.mode == "loglik":
            settings = GenerationSettings("logprob", 1, 0.0, seed)
            comps = _loglik(be, cps, settings, reporter)
            answered = [
                Answered(p, loglik=c.option_logprobs[0] if c.option_logprobs else None)
                for p, c in zip(chunk, comps, strict=True)
            ]
        else:
            settings = GenerationSettings("generate", first.max_new_tokens, 0.0, seed)
            comps = call_backend(be, cps, settings, reporter)
            answered = [Answered(p, text=c.text) for p, c in zip(chunk, comps, strict=True)]
        on_answers(answered)
        out += answered
        i += len(chunk)
    return out
