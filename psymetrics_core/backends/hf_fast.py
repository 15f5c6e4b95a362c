"""Batched option scoring for the ``hf`` backend, reusing the KV cache of a shared prefix.

Every (prompt, option) pair becomes a token row exactly as :meth:`HFBackend.loglikelihoods`
tokenises it (lm-eval's split: encode ``context + continuation``, cut after the context's
tokens). When every option of a prompt is a single token the prompt needs one row, read at its
last position. Rows are sorted so that prompts with the same instruction sit together; in each
batch the common token prefix is run once, its KV cache is copied to the batch, and only the
rest of each row is computed (right padding, so positions and causal attention of real tokens
are exactly those of the unbatched computation).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..types import Completion, Prompt
from .base import Reporter

__all__ = ["score_prompts", "score_prompts_native"]


@dataclass
class _Row:
    prompt: int  # index of the prompt
    tokens: list[int]
    # (position whose next-token distribution is read, token id, option index)
    reads: list[tuple[int, int, int]]


def _rows(backend: Any, prompts: Sequence[Prompt]) -> list[_Row]:
    rows: list[_Row] = []
    for i, prompt in enumerate(prompts):
        context = backend.context_text(prompt)
        ctx = backend._encode(context)
        pieces = []
        for o in prompt.options:
            whole = backend._encode(context + o.scored_text)
            if whole[: len(ctx)] != ctx:
                pieces.append((ctx, backend._encode(o.scored_text)))
            else:
                pieces.append((ctx, whole[len(ctx) :]))
        if all(len(c) == 1 and p == ctx for p, c in pieces):
            reads = [(len(ctx) - 1, c[0], k) for k, (_, c) in enumerate(pieces)]
            rows.append(_Row(i, list(ctx), reads))
            continue
        for k, (p, c) in enumerate(pieces):
            reads = [(len(p) - 1 + j, t, k) for j, t in enumerate(c)]
            rows.append(_Row(i, list(p) + list(c), reads))
    return rows


def _common_prefix(rows: list[_Row]) -> int:
    """Length of the shared token prefix, short enough that every read is after it."""
    first = rows[0].tokens
    n = min(min(r.reads[0][0] for r in rows), min(len(r.tokens) - 1 for r in rows))
    for r in rows[1:]:
        t = r.tokens
        m = 0
        while m < n and t[m] == first[m]:
            m += 1
        n = m
    return max(n, 0)


def score_prompts(
    backend: Any,
    prompts: Sequence[Prompt],
    progress: Reporter | None,
    on_result: Callable[[int, Completion], None] | None,
) -> list[Completion]:
    """Option log-likelihoods for ``prompts``; equal (within float error) to the plain loop."""
    import torch

    model, device = backend._model, backend.device
    rows = sorted(_rows(backend, prompts), key=lambda r: r.tokens)
    scores: list[list[float]] = [[0.0] * len(p.options) for p in prompts]
    pending = [sum(1 for r in rows if r.prompt == i) for i in range(len(prompts))]
    prefixes: dict[tuple[int, ...], Any] = {}
    done: list[Completion | None] = [None] * len(prompts)
    size = max(1, backend.batch_size)
    with torch.inference_mode():
        for start in range(0, len(rows), size):
            batch = rows[start : start + size]
            n_pre = _common_prefix(batch)
            key = tuple(batch[0].tokens[:n_pre])
            past = None
            if n_pre > 0:
                if key not in prefixes:
                    if len(prefixes) >= 4:
                        prefixes.pop(next(iter(prefixes)))
                    ids = torch.tensor([list(key)], device=device)
                    prefixes[key] = model(input_ids=ids, use_cache=True).past_key_values
                past = copy.deepcopy(prefixes[key])
                past.batch_repeat_interleave(len(batch))
            width = max(len(r.tokens) for r in batch) - n_pre
            pad = backend._tok.pad_token_id or 0
            ids = torch.tensor(
                [r.tokens[n_pre:] + [pad] * (width - len(r.tokens) + n_pre) for r in batch],
                device=device,
            )
            # only the positions some row reads from get logits (relative to the suffix)
            wanted = sorted({pos - n_pre for r in batch for pos, _, _ in r.reads})
            index = {pos: j for j, pos in enumerate(wanted)}
            keep = torch.tensor(wanted, device=device)
            logits = model(
                input_ids=ids, past_key_values=past, use_cache=past is not None, logits_to_keep=keep
            ).logits
            logp = torch.log_softmax(logits.float(), dim=-1)
            for b, r in enumerate(batch):
                for pos, tok, k in r.reads:
                    scores[r.prompt][k] += float(logp[b, index[pos - n_pre], tok])
                pending[r.prompt] -= 1
                if pending[r.prompt] == 0:
                    comp = Completion(option_logprobs=tuple(scores[r.prompt]))
                    done[r.prompt] = comp
                    if on_result is not None:
                        on_result(r.prompt, comp)
                    if progress is not None:
                        progress.advance(1)
    return [c for c in done if c is not None]


def score_prompts_native(
    backend: Any,
    prompts: Sequence[Prompt],
    progress: Reporter | None,
    on_result: Callable[[int, Completion], None] | None,
    token_budget: int = 4096,
) -> list[Completion]:
    """As :func:`score_prompts` on the native Llama forward pass (``native_llama``).

    The token prefix shared by every row of the call is run once; the rest of the rows are
    run in batches of about ``token_budget`` padded tokens, shortest first, each attending to
    the shared prefix's keys and values without copying them per row.
    """
    import torch

    engine = backend._native[0]
    device = backend.device
    rows = _rows(backend, prompts)
    scores: list[list[float]] = [[0.0] * len(p.options) for p in prompts]
    pending = [0] * len(prompts)
    for r in rows:
        pending[r.prompt] += 1
    done: list[Completion | None] = [None] * len(prompts)
    n_pre = _common_prefix(rows) if rows else 0
    pad = backend._native[1].pad_token_id or 0
    order = sorted(rows, key=lambda r: (len(r.tokens), r.tokens))
    with torch.inference_mode():
        past = None
        if n_pre > 0:
            _, past = engine.forward(torch.tensor([order[0].tokens[:n_pre]], device=device))
        start = 0
        while start < len(order):
            width = len(order[start].tokens) - n_pre
            end = start + 1
            while end < len(order):
                w = len(order[end].tokens) - n_pre
                if (end - start + 1) * w > token_budget:
                    break
                end += 1
            batch = order[start:end]
            width = max(len(r.tokens) for r in batch) - n_pre
            ids = torch.tensor(
                [r.tokens[n_pre:] + [pad] * (width - len(r.tokens) + n_pre) for r in batch],
                device=device,
            )
            wanted = sorted({pos - n_pre for r in batch for pos, _, _ in r.reads})
            index = {pos: j for j, pos in enumerate(wanted)}
            hidden, _ = engine.forward(ids, past, keep=torch.tensor(wanted, device=device))
            logp = torch.log_softmax(engine.logits(hidden).float(), dim=-1)
            for b, r in enumerate(batch):
                for pos, tok, k in r.reads:
                    scores[r.prompt][k] += float(logp[b, index[pos - n_pre], tok])
                pending[r.prompt] -= 1
                if pending[r.prompt] == 0:
                    comp = Completion(option_logprobs=tuple(scores[r.prompt]))
                    done[r.prompt] = comp
                    if on_result is not None:
                        on_result(r.prompt, comp)
                    if progress is not None:
                        progress.advance(1)
            start = end
    return [c for c in done if c is not None]
