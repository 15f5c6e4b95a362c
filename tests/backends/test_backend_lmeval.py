"""``--model lm-eval:<name>``: the real lm-eval ``hf`` model against psymetrics' own ``hf``."""

from __future__ import annotations

from typing import Any

import pytest
from psymetrics_plugin_hf.local_model import converted_copy, smollm2_location

from psymetrics_core.administer.runner import evaluate, make_backend
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.errors import BackendError

pytest.importorskip("lm_eval", reason="lm-eval is installed by make setup (requirements-dev)")


def test_unknown_lm_eval_model_is_a_clear_error(fresh_plugins: Any) -> None:
    with pytest.raises(BackendError, match="lm-eval has no model 'no-such-model'"):
        make_backend("lm-eval:no-such-model", None, fresh_plugins).option_logprobs(
            [], GenerationSettings(mode="logprob")
        )
    with pytest.raises(BackendError, match="lm-eval:<name>"):
        make_backend("lm-eval", None, fresh_plugins)


@pytest.mark.model
def test_lm_eval_hf_matches_psym_hf(smollm2: Any, tmp_path: Any, fresh_plugins: Any) -> None:
    smollm2._load()  # makes sure the dequantised copy exists
    copy = converted_copy(*map(str, smollm2_location()))
    args = f"pretrained={copy},dtype=float32,device=cpu,batch_size=4"
    bridge = make_backend("lm-eval:hf", args, fresh_plugins)
    inst = fresh_plugins.get_instrument("bfi")
    hook = fresh_plugins.hook
    prompts = [hook.render_prompt(instrument=inst, item=it) for it in inst.items[:3]]
    settings = GenerationSettings(mode="logprob")
    theirs = bridge.option_logprobs(prompts, settings)
    for p, c in zip(prompts, theirs, strict=True):
        assert bridge.context_text(p) == smollm2.context_text(p)  # same chat template
        ours = smollm2.loglikelihoods(smollm2.context_text(p), [str(o.value) for o in p.options])
        # lm-eval's _encode_pair moves the context's trailing whitespace (the chat template
        # ends in "\n") into the continuation, so each of its scores also holds log p("\n"):
        # the same constant for every option of a prompt, leaving probabilities unchanged
        offsets = [t - o for t, o in zip(c.option_logprobs, ours, strict=True)]
        assert max(offsets) - min(offsets) < 1e-4
        assert -0.5 < offsets[0] <= 1e-6  # a log-probability of "\n" close to 1
        assert max(range(5), key=ours.__getitem__) == max(
            range(5), key=c.option_logprobs.__getitem__
        )
    res = evaluate(
        ["bfi"],
        model="lm-eval:hf",
        model_args=args,
        mode="logprob",
        limit=3,
        cache=False,
        session=fresh_plugins,
    )
    assert res["backend"]["backend"] == "lm-eval:hf" and res["tasks"]["bfi"]["n_answered"] == 3
