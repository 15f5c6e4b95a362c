"""Generation-probability scoring (the value-portrait task) against its torch floor.

psym scores the 520 query-response pairs (104 scenarios x 5 whole replies) as ``psym eval
--tasks value-portrait`` does on the default model: one ``option_logprobs`` call, the rows
grouped by their shared prefix so each query is computed once. The floor is
``scale.floor_seconds`` with one group per scenario: in transformers, each query run once and
its five replies in one batched forward over its keys and values, no Python work per row and
tokenisation excluded. Target: psym within 1.3x of the floor.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.scale import floor_seconds


def genprob_vs_floor(limit: int | None = None) -> dict[str, Any]:
    """psym's scoring of the value-portrait pairs against the floor, best of 2 each."""
    from psymetrics_plugin_value_portrait import make_instrument

    from psymetrics_core.api import session_or_default
    from psymetrics_core.backends.base import GenerationSettings

    be = session_or_default().make_backend("smollm2")
    be._load()
    task = make_instrument()
    items = task.load_items()[:limit] if limit else task.load_items()
    prompts = [task.render(it) for it in items]
    settings = GenerationSettings(mode="logprob")
    be.option_logprobs(prompts[:1], settings)  # warm-up (engine load, allocator)
    ours, floor = [], []
    for _ in range(2):
        start = time.perf_counter()
        be.option_logprobs(prompts, settings)
        ours.append(time.perf_counter() - start)
        floor.append(floor_seconds(be, [[p] for p in prompts]))
    pairs = sum(len(p.options) for p in prompts)
    return {
        "scenarios": len(prompts),
        "pairs": pairs,
        "engine": be.scoring_engine(),
        "psym_s": min(ours),
        "floor_s": min(floor),
        "ratio": min(ours) / min(floor),
    }


def report(limit: int | None = None) -> None:
    """Print the ``make bench`` line."""
    r = genprob_vs_floor(limit)
    print(
        f"[genprob] value-portrait {r['pairs']} pairs ({r['scenarios']} scenarios) on the "
        f"default model ({r['engine']}): psym {r['psym_s']:.1f} s vs torch floor "
        f"{r['floor_s']:.1f} s (each query once, its replies in one batch) = "
        f"{r['ratio']:.2f}x (target <= 1.3x)"
    )
