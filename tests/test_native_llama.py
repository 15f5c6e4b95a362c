"""The native Llama forward pass (backends/native_llama.py) against transformers' LlamaForCausalLM
on the real SmolLM2 weights: same chat text, same token ids, same logits within float error."""

from __future__ import annotations

from typing import Any

import pytest

from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.types import Option, Prompt


@pytest.mark.model
def test_native_forward_equals_transformers(smollm2: Any) -> None:
    import torch

    opts = (Option(1, "no"), Option(2, "yes"))
    prompts = [
        Prompt(messages=({"role": "user", "content": "Do you like tea?"},), options=opts, text=""),
        Prompt(
            messages=(
                {"role": "system", "content": "You are a careful rater."},
                {"role": "user", "content": "Rate: I am talkative. Ünïcode — ok?"},
            ),
            options=opts,
            text="",
        ),
    ]
    smollm2.option_logprobs(prompts, GenerationSettings(mode="logprob"))
    assert smollm2._native is not None, "SmolLM2 should be scored by the native forward pass"
    engine, ntok = smollm2._native
    smollm2._load()  # transformers model and tokenizer, as lm-eval uses them
    tok, model = smollm2._tok, smollm2._model
    for p in prompts:
        ours = smollm2.context_text(p)
        theirs = tok.apply_chat_template(
            list(p.messages), tokenize=False, add_generation_prompt=True
        )
        assert ours == theirs
        assert ntok.encode(ours) == list(tok(ours, add_special_tokens=False)["input_ids"])
    ids = torch.tensor([ntok.encode(smollm2.context_text(prompts[1]))])
    with torch.inference_mode():
        hidden, _ = engine.forward(ids)
        ours = torch.log_softmax(engine.logits(hidden).float(), -1)
        theirs = torch.log_softmax(model(input_ids=ids).logits.float(), -1)
        assert (ours - theirs).abs().max().item() < 1e-3
        # the shared-prefix path: prefix once, then two rows attending to it
        n = ids.shape[1] // 2
        _, past = engine.forward(ids[:, :n])
        rows = torch.cat([ids[:, n:], ids[:, n:]])
        h2, _ = engine.forward(rows, past)
        split = torch.log_softmax(engine.logits(h2).float(), -1)
        assert (split[0] - theirs[0, n:]).abs().max().item() < 1e-3
        assert (split[1] - split[0]).abs().max().item() == 0.0
