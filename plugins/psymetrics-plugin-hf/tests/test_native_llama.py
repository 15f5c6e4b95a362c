"""The native Llama forward passes of psymetrics-plugin-llama-engine (``onnx_llama`` on ONNX
Runtime, the default on a CPU, and ``native_llama`` in torch) against transformers'
LlamaForCausalLM on the real SmolLM2 weights: same chat text, same token ids, same
log-probabilities within float error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from psymetrics_core.api import GenerationSettings, Option, Prompt


@pytest.fixture(scope="module", autouse=True)
def _needs_the_engine() -> None:
    """Skips without the optional engine distribution, imported when the tests run, not while
    every worker collects."""
    pytest.importorskip("psymetrics_plugin_llama_engine")


_OPTS = (Option(1, "no"), Option(2, "yes"))
_PROMPTS = [
    Prompt(messages=({"role": "user", "content": "Do you like tea?"},), options=_OPTS, text=""),
    Prompt(
        messages=(
            {"role": "system", "content": "You are a careful rater."},
            {"role": "user", "content": "Rate: I am talkative. Ünïcode — ok?"},
        ),
        options=_OPTS,
        text="",
    ),
]


def _directory(smollm2: Any) -> Path:
    from psymetrics_plugin_hf.local_model import converted_copy

    smollm2.option_logprobs(_PROMPTS[:1], GenerationSettings(mode="logprob"))  # converts once
    return converted_copy(smollm2.pretrained, smollm2.gguf_file)


@pytest.fixture(scope="module")
def engine_of(smollm2: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``engine_of(kind)``: each engine loaded once for this module's tests. ONNX Runtime's is
    the one the smollm2 backend scores options with (its default on a CPU), where it is one;
    torch's is loaded from the same dequantised copy."""
    from psymetrics_plugin_llama_engine.native_llama import load_native
    from psymetrics_plugin_llama_engine.onnx_llama import OnnxLlama, load_onnx

    made: dict[str, Any] = {}

    def get(kind: str) -> Any:
        if kind not in made:
            directory = _directory(smollm2)
            if kind == "torch":
                made[kind] = load_native(directory)[0]
            elif isinstance(smollm2._native[0], OnnxLlama):
                made[kind] = smollm2._native[0]
            else:
                made[kind] = load_onnx(directory, 2, tmp_path_factory.mktemp("graphs"))
        return made[kind]

    return get


@pytest.mark.model
def test_default_cpu_engine_is_onnxruntime(smollm2: Any) -> None:
    from psymetrics_plugin_llama_engine.onnx_llama import OnnxLlama

    smollm2.option_logprobs(_PROMPTS, GenerationSettings(mode="logprob"))
    assert isinstance(smollm2._native[0], OnnxLlama)
    assert smollm2.identity()["option_scoring"] == "onnxruntime"


@pytest.mark.model
@pytest.mark.parametrize("kind", ["onnxruntime", "torch"])
def test_native_forward_equals_transformers(smollm2: Any, kind: str, engine_of: Any) -> None:
    import torch

    engine = engine_of(kind)
    ntok = smollm2._native[1]
    smollm2._load()  # transformers model and tokenizer, as lm-eval uses them
    tok, model = smollm2._tok, smollm2._model
    for p in _PROMPTS:
        ours = smollm2.context_text(p)
        theirs = tok.apply_chat_template(
            list(p.messages), tokenize=False, add_generation_prompt=True
        )
        assert ours == theirs
        assert ntok.encode(ours) == list(tok(ours, add_special_tokens=False)["input_ids"])
    ids = np.array([ntok.encode(smollm2.context_text(_PROMPTS[1]))], dtype=np.int64)
    with torch.inference_mode():
        theirs = torch.log_softmax(model(input_ids=torch.from_numpy(ids)).logits.double(), -1)
    theirs_np = theirs[0].numpy()
    hidden, _ = engine.forward(ids)
    ours_np = engine.log_probs(hidden[0])
    assert np.abs(ours_np - theirs_np).max() < 1e-3
    # the shared-prefix path: prefix once, then two rows attending to it
    n = ids.shape[1] // 2
    _, cache = engine.forward(ids[:, :n])
    past = engine.prefix(cache, 0, n)
    h2, _ = engine.forward(np.concatenate([ids[:, n:], ids[:, n:]]), past)
    split = [engine.log_probs(h2[i]) for i in range(2)]
    assert np.abs(split[0] - theirs_np[n:]).max() < 1e-3
    assert np.abs(split[1] - split[0]).max() == 0.0


@pytest.mark.model
@pytest.mark.parametrize("kind", ["onnxruntime", "torch"])
def test_native_forward_keep_equals_the_full_forward(
    smollm2: Any, kind: str, engine_of: Any
) -> None:
    """The last layer's pruning (only kept positions get queries, attention output and MLP)
    gives the hidden states of the full pass at those positions."""
    engine = engine_of(kind)
    tok = smollm2._native[1]
    ids = np.array([tok.encode("I see myself as someone who is talkative. Agree? 1 2 3")] * 2)
    last = ids.shape[1] - 1
    full = np.asarray(engine.forward(ids)[0])
    pruned = np.asarray(engine.forward(ids, keep=np.array([3, last]))[0])
    past = engine.prefix(engine.forward(ids[:1, :4])[1], 0, 4)
    # after a 4-token prefix: suffix positions 0 and last are full positions 4 and last
    pruned_past = np.asarray(engine.forward(ids[:, 4:], past, keep=np.array([0, last - 4]))[0])
    assert np.abs(pruned - full[:, [3, last]]).max() < 1e-4
    assert np.abs(pruned_past - full[:, [4, last]]).max() < 1e-4
