"""The batched, prefix-reusing option scorer of the hf backend against the plain computation."""

from __future__ import annotations

from typing import Any

import pytest

from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.plugins import get_plugin_manager
from psymetrics_core.registry import get_instrument
from psymetrics_core.types import Option, Prompt


@pytest.mark.model
def test_fast_scores_equal_plain_loop(smollm2: Any) -> None:
    hook = get_plugin_manager().hook
    prompts = []
    for task, ids in (("bfi", range(0, 5)), ("mfq", (0, 1, 16, 17, 18))):
        inst = get_instrument(task)
        prompts += [hook.render_prompt(instrument=inst, item=inst.items[i]) for i in ids]
    # multi-token options ("10", "100") exercise the one-row-per-option path
    multi = (Option(10, "ten"), Option(25, "twenty-five"), Option(100, "hundred"))
    prompts.append(
        Prompt(messages=({"role": "user", "content": "Pick one."},), options=multi, text="")
    )
    stored: dict[int, Any] = {}
    fast = smollm2.option_logprobs(
        prompts, GenerationSettings(mode="logprob"), on_result=lambda i, c: stored.setdefault(i, c)
    )
    assert sorted(stored) == list(range(len(prompts)))  # every prompt reported as it finished
    for i, (p, c) in enumerate(zip(prompts, fast, strict=True)):
        plain = smollm2.loglikelihoods(smollm2.context_text(p), [str(o.value) for o in p.options])
        assert c.option_logprobs == pytest.approx(plain, abs=1e-4)
        assert max(range(len(plain)), key=plain.__getitem__) == max(
            range(len(plain)), key=c.option_logprobs.__getitem__
        )
        assert stored[i] == c
