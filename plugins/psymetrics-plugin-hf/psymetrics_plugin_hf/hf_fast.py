"""Batched option scoring for the ``hf`` backend, reusing the KV cache of a shared prefix.

Every (prompt, option) pair becomes a token row exactly as :meth:`HFBackend.loglikelihoods`
tokenises it (lm-eval's split: encode ``context + continuation``, cut after the context's
tokens). When every option of a prompt is a single token the prompt needs one row, read at its
last position. Rows are grouped by the token prefix they share (the system prompt, a
population's persona, the instruction: :func:`_prefix_groups`); each group's prefix is run
once, its KV cache is reused by the group's rows, and only the rest of each row is computed
(right padding, so positions and causal attention of real tokens are exactly those of the
unbatched computation).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from psymetrics_core.api import Completion, Prompt, Reporter

from .hf_turn import option_texts

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
        for text in option_texts(backend, prompt):
            whole = backend._encode(context + text)
            if whole[: len(ctx)] != ctx:
                pieces.append((ctx, backend._encode(text)))
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


def token_counts(rows: list[_Row], prompts: Sequence[Prompt]) -> list[dict[str, Any]]:
    """Per prompt, the completion's ``meta``: for a prompt whose options carry continuations,
    ``option_tokens``, the number of tokens scored for each option (for a per-token mean)."""
    counts = [[0] * len(p.options) for p in prompts]
    for r in rows:
        for _, _, k in r.reads:
            counts[r.prompt][k] += 1
    return [
        {"option_tokens": c} if p.has_continuations else {}
        for c, p in zip(counts, prompts, strict=True)
    ]


def _finish(
    batch: list[_Row],
    pending: list[int],
    scores: list[list[float]],
    done: list[Completion | None],
    on_result: Callable[[int, Completion], None] | None,
    progress: Reporter | None,
    metas: list[dict[str, Any]],
) -> None:
    """Count ``batch``'s rows off their prompts; a prompt whose rows are all scored is done:
    reported to ``on_result`` and ``progress`` at once."""
    for r in batch:
        pending[r.prompt] -= 1
        if pending[r.prompt] == 0:
            comp = Completion(option_logprobs=tuple(scores[r.prompt]), meta=metas[r.prompt])
            done[r.prompt] = comp
            if on_result is not None:
                on_result(r.prompt, comp)
            if progress is not None:
                progress.advance(1)


def score_prompts(
    backend: Any,
    prompts: Sequence[Prompt],
    progress: Reporter | None,
    on_result: Callable[[int, Completion], None] | None,
) -> list[Completion]:
    """Option log-likelihoods for ``prompts``; equal (within float error) to the plain loop.

    Rows are split into the prefix groups of :func:`_prefix_groups`; each group's prefix is
    run once and its KV cache copied to every batch of the group's rows (a batch never mixes
    groups, so a population's persona is computed once per respondent, not once per batch or
    per item of a batch that straddles two respondents).
    """
    import torch

    model, device = backend._model, backend.device
    rows = _rows(backend, prompts)
    metas = token_counts(rows, prompts)
    scores: list[list[float]] = [[0.0] * len(p.options) for p in prompts]
    pending = [sum(1 for r in rows if r.prompt == i) for i in range(len(prompts))]
    done: list[Completion | None] = [None] * len(prompts)
    size = max(1, backend.batch_size)
    groups = _prefix_groups(rows, _common_prefix(rows)) if rows else []
    with torch.inference_mode():
        for group in groups:
            n_pre = group.prefix
            prefix = None
            if n_pre > 0:
                ids = torch.tensor([group.rows[0].tokens[:n_pre]], device=device)
                prefix = model(input_ids=ids, use_cache=True).past_key_values
            order = sorted(group.rows, key=lambda r: r.tokens)
            for start in range(0, len(order), size):
                batch = order[start : start + size]
                past = None
                if prefix is not None:
                    past = copy.deepcopy(prefix)
                    past.batch_repeat_interleave(len(batch))
                _score_batch(backend, batch, n_pre, past, scores)
                _finish(batch, pending, scores, done, on_result, progress, metas)
    return [c for c in done if c is not None]


def _score_batch(
    backend: Any, batch: list[_Row], n_pre: int, past: Any, scores: list[list[float]]
) -> None:
    """Run ``batch``'s rows after their first ``n_pre`` tokens (whose KV cache is ``past``)
    and add each read to ``scores``."""
    import torch

    model, device = backend._model, backend.device
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
    logp = log_softmax(logits)
    for b, r in enumerate(batch):
        for pos, tok, k in r.reads:
            scores[r.prompt][k] += float(logp[b, index[pos - n_pre], tok])


_MIN_SHARED = 16  # extra shared tokens that earn a group its own prefix pass


@dataclass
class _Group:
    prefix: int  # tokens every row of the group shares, computed once for the group
    rows: list[_Row]


def _prefix_groups(rows: list[_Row], root: int) -> list[_Group]:
    """``rows`` (sharing ``root`` tokens) split into groups that share a longer prefix.

    Rows are sorted by their tokens, so rows with the same instruction sit next to each other;
    neighbours that share at least ``_MIN_SHARED`` tokens beyond ``root`` form a group whose own
    common prefix is computed once (one instruction block under a common system prompt: the
    two parts of the MFQ, or several questionnaires in one call). Rows that share nothing more
    form one group at ``root``.

    A group is split again the same way below its own prefix, so that prompts that begin alike
    but part later never share less than they could: a population's respondents whose personas
    begin with the same words fall in one run, which splits into one group per respondent (its
    persona and instruction computed once, not once per item). Each split lengthens the prefix,
    so the recursion ends.
    """
    order = sorted(rows, key=lambda r: r.tokens)
    runs: list[list[_Row]] = [[order[0]]] if order else []
    for row in order[1:]:
        prev, m = runs[-1][-1].tokens, 0
        limit = min(len(prev), len(row.tokens))
        while m < limit and prev[m] == row.tokens[m]:
            m += 1
        if m >= root + _MIN_SHARED:
            runs[-1].append(row)
        else:
            runs.append([row])
    groups: list[_Group] = []
    loose: list[_Row] = []
    for run in runs:
        n = _common_prefix(run) if len(run) > 1 else root
        if n - root >= _MIN_SHARED:
            groups.extend(_prefix_groups(run, n))
        else:
            loose.extend(run)
    if loose:
        groups.append(_Group(root, loose))
    return groups


def score_prompts_native(
    backend: Any,
    prompts: Sequence[Prompt],
    progress: Reporter | None,
    on_result: Callable[[int, Completion], None] | None,
    token_budget: int = 4096,
    prefix_budget: int = 32768,
) -> list[Completion]:
    """As :func:`score_prompts` on a native Llama forward pass (``onnx_llama`` on a CPU,
    ``native_llama`` elsewhere: both take token ids as arrays, ``forward``, ``prefix`` and
    ``log_probs``).

    The token prefix shared by every row of the call is run once, then each group of rows
    sharing a longer prefix (:func:`_prefix_groups`) extends it once; the rest of the rows are
    run in batches of about ``token_budget`` padded tokens, shortest first, each attending to
    its group's keys and values without copying them per row. The groups' prefixes are run
    in passes of at most ``prefix_budget`` padded tokens (:func:`_group_slices`), each pass's
    rows scored before the next, so the keys and values held at once stay bounded however many
    respondents of a population one call holds.
    """
    import numpy as np

    engine = backend._native[0]
    rows = _rows(backend, prompts)
    metas = token_counts(rows, prompts)
    scores: list[list[float]] = [[0.0] * len(p.options) for p in prompts]
    pending = [0] * len(prompts)
    for r in rows:
        pending[r.prompt] += 1
    done: list[Completion | None] = [None] * len(prompts)
    root = _common_prefix(rows) if rows else 0
    pad = backend._native[1].pad_token_id or 0
    groups = _prefix_groups(rows, root) if rows else []
    for part in _group_slices(groups, prefix_budget):
        pasts = _group_pasts(engine, part, root, pad)
        for group, past in zip(part, pasts, strict=True):
            n_pre = group.prefix
            for batch in _budget_batches(group.rows, n_pre, token_budget):
                width = max(len(r.tokens) for r in batch) - n_pre
                ids = np.array(
                    [r.tokens[n_pre:] + [pad] * (width - len(r.tokens) + n_pre) for r in batch],
                    dtype=np.int64,
                )
                wanted = sorted({pos - n_pre for r in batch for pos, _, _ in r.reads})
                hidden, _ = engine.forward(ids, past, keep=np.array(wanted, dtype=np.int64))
                _add_reads(engine, hidden, batch, wanted, n_pre, scores)
                _finish(batch, pending, scores, done, on_result, progress, metas)
    return [c for c in done if c is not None]


def _group_slices(groups: list[_Group], budget: int) -> list[list[_Group]]:
    """``groups`` in order, cut into slices whose prefix pass (one row per group, padded to the
    slice's longest prefix) stays within ``budget`` tokens; a slice holds at least one group.
    A group joins the slice only while that adds no more padded tokens than a pass of its own
    would cost (``_BATCH_COST`` + its prefix): prefixes of very different lengths (one query per
    scenario of value-portrait) are not padded to the longest of them."""
    slices: list[list[_Group]] = []
    width = 0
    for group in groups:
        wider = max(width, group.prefix)
        added = wider * (len(slices[-1]) + 1) - width * len(slices[-1]) if slices else 0
        cheaper = added <= _BATCH_COST + group.prefix
        if slices and cheaper and wider * (len(slices[-1]) + 1) <= budget:
            slices[-1].append(group)
            width = wider
        else:
            slices.append([group])
            width = group.prefix
    return slices


def _group_pasts(engine: Any, groups: list[_Group], root: int, pad: int) -> list[Any]:
    """The keys and values of each group's prefix, from one forward pass: the groups' prefixes
    right-padded into one batch (a pass costs a read of every weight however few its tokens),
    each group's cache then the first ``prefix`` positions of its row; the group at ``root``
    shares the root positions, which every prefix starts with."""
    import numpy as np

    sources = [g for g in groups if g.prefix > root] or groups[:1]  # the root alone
    width = max((g.prefix for g in sources), default=0)
    if width == 0:
        return [None for _ in groups]
    ids = np.array(
        [g.rows[0].tokens[: g.prefix] + [pad] * (width - g.prefix) for g in sources],
        dtype=np.int64,
    )
    cache = engine.forward(ids, keep=np.array([0], dtype=np.int64))[1]
    row = {id(g): i for i, g in enumerate(sources)}

    def cut(i: int, n: int) -> Any:
        return engine.prefix(cache, i, n) if n > 0 else None

    return [cut(row[id(g)], g.prefix) if id(g) in row else cut(0, root) for g in groups]


def _add_reads(
    engine: Any,
    hidden: Any,
    batch: list[_Row],
    wanted: list[int],
    n_pre: int,
    scores: list[list[float]],
) -> None:
    """Add each read of ``batch`` to ``scores``: log-softmax logits are computed only at the
    (row, position) cells some read uses, not at every kept position of every row."""
    index = {pos: j for j, pos in enumerate(wanted)}
    cells: dict[tuple[int, int], int] = {}
    reads: list[tuple[_Row, int, int, int]] = []  # (row, option, cell, token)
    for b, row in enumerate(batch):
        for pos, tok, k in row.reads:
            cell = cells.setdefault((b, index[pos - n_pre]), len(cells))
            reads.append((row, k, cell, tok))
    logp = engine.log_probs(hidden[[b for b, _ in cells], [j for _, j in cells]])
    values = logp[[cell for _, _, cell, _ in reads], [tok for _, _, _, tok in reads]]
    for (row, k, _, _), value in zip(reads, values.tolist(), strict=True):
        scores[row.prompt][k] += value


_BATCH_COST = 64  # what one more forward pass costs, in padded tokens (reading the weights)


def _budget_batches(rows: list[_Row], n_pre: int, token_budget: int) -> list[list[_Row]]:
    """``rows`` shortest first, cut into batches of at most ``token_budget`` padded tokens
    after the first ``n_pre`` (a batch holds at least one row), where the cuts minimise the
    padded tokens plus ``_BATCH_COST`` per batch (dynamic programming over the sorted rows)."""
    order = sorted(rows, key=lambda r: (len(r.tokens), r.tokens))
    widths = [len(r.tokens) - n_pre for r in order]
    best = [0.0] + [float("inf")] * len(order)
    cut = [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        width = widths[end - 1]  # the longest row of any batch ending here
        start = end - 1
        while start >= 0 and (end - start == 1 or (end - start) * width <= token_budget):
            cost = best[start] + (end - start) * width + _BATCH_COST
            if cost < best[end]:
                best[end], cut[end] = cost, start
            start -= 1
    batches: list[list[_Row]] = []
    end = len(order)
    while end > 0:
        batches.append(order[cut[end] : end])
        end = cut[end]
    return batches[::-1]


def log_softmax(logits: Any) -> Any:
    """Log-softmax over the last axis of a torch tensor of logits, in float32: the logits minus
    their ``logsumexp``. ``torch.log_softmax``'s float32 kernel on a CPU reads every token about
    8.6e-6 nats high over SmolLM2's 49,152-token vocabulary (against a float64 log-softmax of
    the same logits), so a 48-token reply about 4e-4 nats high; ``logsumexp`` is within 1e-6
    of float64 (the same computation as the Llama engines' ``log_probs``)."""
    import torch

    logits = logits.float()
    return logits - torch.logsumexp(logits, dim=-1, keepdim=True)


def plain_meta(backend: Any, prompt: Prompt) -> dict[str, Any]:
    """The completion's ``meta`` for ``prompt`` scored on its own (``prefix_cache=false``)."""
    return token_counts(_rows(backend, [prompt]), [prompt])[0]
