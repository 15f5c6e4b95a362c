"""Text generation for the ``hf`` backend, reusing the KV cache of a shared prompt prefix.

Prompts are grouped by the token prefix they share exactly as option scoring groups them
(:func:`psymetrics_plugin_hf.hf_fast._prefix_groups`: a population respondent's persona and
instruction). A group's prefix is run through the model once; its KV cache (a copy, repeated
over the batch) is handed to ``model.generate(past_key_values=...)`` for the group's prompts,
so only each prompt's own tokens and the answer are computed. The padding of a batch sits
between the prefix and each prompt's own tokens, so every real token keeps the position it has
in the plain left-padded batch. Greedy decoding only: sampled generation (and
``prefix_cache=false``) keeps plain left-padded batches in prompt order, whose seeds depend on
that order.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from psymetrics_core.api import Completion, GenerationSettings, OnResult, Prompt, Reporter
from psymetrics_plugin_hf.hf_fast import _MIN_SHARED, _common_prefix, _prefix_groups, _Row

__all__ = ["generate_text", "stop_ids"]


def generate_text(
    backend: Any,
    prompts: Sequence[Prompt],
    settings: GenerationSettings,
    progress: Reporter | None,
    on_result: OnResult | None,
) -> list[Completion]:
    """Completions of text-only ``prompts``, in order (``on_result`` as each batch ends)."""
    import torch

    tok = backend._tok
    ids = [
        list(tok(backend.context_text(p), add_special_tokens=False)["input_ids"]) for p in prompts
    ]
    done: list[Completion | None] = [None] * len(prompts)
    size = max(1, backend.batch_size)
    plain = list(range(len(prompts)))
    shared: list[tuple[int, list[int]]] = []  # (prefix length, prompt indices)
    if backend.prefix_cache and settings.temperature <= 0 and len(prompts) > 1:
        rows = [_Row(i, t, [(len(t) - 1, 0, 0)]) for i, t in enumerate(ids) if len(t) > 1]
        groups = _prefix_groups(rows, _common_prefix(rows)) if rows else []
        shared = [
            (g.prefix, [r.prompt for r in g.rows])
            for g in groups
            if g.prefix >= _MIN_SHARED and len(g.rows) > 1
        ]
        taken = {i for _, members in shared for i in members}
        plain = [i for i in plain if i not in taken]
    with torch.inference_mode():
        for unit in _units(shared, size):
            cache = _prefix_cache(backend, [ids[m[0]][:n] for n, m in unit])
            order = [(i, n, g) for g, (n, m) in enumerate(unit) for i in m]
            for start in range(0, len(order), size):  # more than one batch: one group only
                batch = order[start : start + size]
                past = copy.deepcopy(cache)
                past.batch_select_indices(
                    torch.tensor([g for _, _, g in batch], device=backend.device)
                )
                out = _run(backend, [(ids[i], n) for i, n, _ in batch], past, settings, 0)
                _finish(backend, [i for i, _, _ in batch], out, settings, done, on_result, progress)
        for start in range(0, len(plain), size):
            batch_ids = plain[start : start + size]
            out = _run(backend, [(ids[i], 0) for i in batch_ids], None, settings, start)
            _finish(backend, batch_ids, out, settings, done, on_result, progress)
    return [c for c in done if c is not None]


def _units(shared: list[tuple[int, list[int]]], size: int) -> list[list[tuple[int, list[int]]]]:
    """Groups packed into batches of at most ``size`` prompts, whole groups together (a group
    of ``size`` or more prompts is a unit alone, its prefix computed once for all its batches)."""
    units: list[list[tuple[int, list[int]]]] = []
    fill = size
    for n, members in shared:
        if len(members) >= size or fill + len(members) > size:
            units.append([])
            fill = 0
        units[-1].append((n, members))
        fill += len(members)
    return units


def _prefix_cache(backend: Any, prefixes: list[list[int]]) -> Any:
    """The KV cache of ``prefixes`` (one row each, left-padded, every token at the position it
    has alone)."""
    import torch

    width = max(len(t) for t in prefixes)
    pad = backend._tok.pad_token_id
    ids = [[pad] * (width - len(t)) + t for t in prefixes]
    mask = torch.tensor([[0] * (width - len(t)) + [1] * len(t) for t in prefixes])
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    device = backend.device
    out = backend._model(
        input_ids=torch.tensor(ids, device=device),
        attention_mask=mask.to(device),
        position_ids=positions.to(device),
        use_cache=True,
    )
    return out.past_key_values


def _run(
    backend: Any,
    batch: list[tuple[list[int], int]],
    past: Any,
    settings: GenerationSettings,
    start: int,
) -> list[Any]:
    """New tokens of each of ``batch``'s (tokens, shared) prompts. The first ``shared`` tokens
    of each (their KV cache ``past``, left-padded to the longest) stay in front; the padding of
    the rest goes between them and each prompt's own tokens."""
    import torch

    tok, model = backend._tok, backend._model
    pad = tok.pad_token_id
    front = max(n for _, n in batch)
    back = max(len(t) - n for t, n in batch)
    input_ids, mask = [], []
    for t, n in batch:
        gap = back - (len(t) - n)
        input_ids.append([pad] * (front - n) + t[:n] + [pad] * gap + t[n:])
        mask.append([0] * (front - n) + [1] * n + [0] * gap + [1] * (len(t) - n))
    kwargs: dict[str, Any] = {"max_new_tokens": settings.max_new_tokens, "pad_token_id": pad}
    if settings.temperature > 0:
        torch.manual_seed(settings.seed + start)
        kwargs.update(do_sample=True, temperature=settings.temperature)
    else:
        kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    if past is not None:
        kwargs[_cache_keyword()] = past
    gen = model.generate(
        input_ids=torch.tensor(input_ids, device=backend.device),
        attention_mask=torch.tensor(mask, device=backend.device),
        **kwargs,
    )
    return list(gen[:, front + back :])


def _cache_keyword() -> str:
    """The name ``generate`` takes a precomputed KV cache by: ``cache`` in the transformers
    that renamed it (``past_key_values`` there warns of its removal), else ``past_key_values``."""
    from transformers.generation import utils

    return "cache" if "cache" in getattr(utils, "ALL_CACHE_NAMES", ()) else "past_key_values"


def _finish(
    backend: Any,
    batch: list[int],
    rows: list[Any],
    settings: GenerationSettings,
    done: list[Completion | None],
    on_result: OnResult | None,
    progress: Reporter | None,
) -> None:
    """Decode a batch's new tokens into its prompts' completions."""
    tok = backend._tok
    stops = stop_ids(tok, backend._model)
    for i, row in zip(batch, rows, strict=True):
        # the OpenAI API's finish_reason: "length" when the budget cut the answer off
        cut = len(row) >= settings.max_new_tokens and int(row[-1]) not in stops
        comp = Completion(
            text=tok.decode(row, skip_special_tokens=True),
            meta={"finish_reason": "length" if cut else "stop"},
        )
        done[i] = comp
        if on_result is not None:
            on_result(i, comp)
    if progress is not None:
        progress.advance(len(batch))


def stop_ids(tok: Any, model: Any) -> set[int]:
    """Token ids that end a generation (end of sequence, padding)."""
    ids: set[int] = set()
    for value in (
        getattr(model.generation_config, "eos_token_id", None),
        tok.eos_token_id,
        tok.pad_token_id,
    ):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return ids
