"""Generation probabilities on the real default model (SmolLM2 through the llama engine, as
``psym eval`` scores by default) equal Song et al.'s computation done directly in transformers.

The reference follows their RQ1/ecological.py: the chat with the user's query and the
assistant's reply, formatted without a generation prompt, minus the tokens of the query formatted
with one; the reply's log-probability is the sum over every remaining token (the reply and the
end-of-turn tokens) of one plain transformers forward pass. Three short queries (15
pairs, ShareGPT and LMSYS) keep ``make test`` short; a Reddit or Dear Abby scenario differs only
in the text framing its query.

Measured on these pairs (about 45 scored tokens each): the torch Llama engine (``native=torch``)
agrees with transformers within 1e-4 nats per reply; the ONNX Runtime engine, the default on a
CPU, reads every token about 8e-6 nats lower than transformers (a bias of the ONNX graph, not of
this task: it is the same at every position and independent of the log-softmax's precision), so
a 48-token reply differs by about 4e-4 nats: it is held to 1.5e-5 nats per scored token
(the torch engine is checked on one scenario to keep the test short).
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.model]

SCENARIOS = ("3902", "4901", "3023")  # ShareGPT, LMSYS, ShareGPT


def _score(backend, scenarios=SCENARIOS):
    from psymetrics_plugin_value_portrait import make_instrument

    from psymetrics_core.backends.base import GenerationSettings

    task = make_instrument()
    items = [it for it in task.load_items() if it.id in scenarios]
    prompts = [task.render(it) for it in items]
    return prompts, backend.option_logprobs(prompts, GenerationSettings(mode="logprob"))


@pytest.fixture(scope="module")
def scored(smollm2):
    """The default model's scores, as ``psym eval --tasks value-portrait`` computes them."""
    return _score(smollm2)


def _ids(tokens) -> list[int]:
    """Token ids as a list (transformers returns a list, or a tensor/encoding in some versions)."""
    return [int(t) for t in (tokens["input_ids"] if hasattr(tokens, "keys") else tokens)]


def _reference(smollm2, prompt):
    """Per option: (summed log-probability, token count), computed as Song et al. do."""
    import torch

    smollm2._load()
    tok, model = smollm2._tok, smollm2._model
    user = list(prompt.messages)
    head = _ids(tok.apply_chat_template(user, add_generation_prompt=True, return_dict=False))
    out = []
    for option in prompt.options:
        chat = [*user, {"role": "assistant", "content": option.continuation}]
        ids = _ids(tok.apply_chat_template(chat, add_generation_prompt=False, return_dict=False))
        assert ids[: len(head)] == head
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids])).logits[0].float()
        logp = torch.log_softmax(logits, dim=-1)
        total = sum(float(logp[i - 1, ids[i]]) for i in range(len(head), len(ids)))
        out.append((total, len(ids) - len(head)))
    return out


def test_reply_log_probabilities_match_a_direct_transformers_computation(smollm2, scored):
    prompts, comps = scored
    assert len(comps) == len(SCENARIOS)
    engine = smollm2.scoring_engine()
    for prompt, comp in zip(prompts, comps, strict=True):
        want = _reference(smollm2, prompt)
        assert comp.meta["option_tokens"] == [n for _, n in want]
        for got, (total, n) in zip(comp.option_logprobs, want, strict=True):
            tol = 1e-4 if engine != "onnxruntime" else 1.5e-5 * n
            assert got == pytest.approx(total, abs=tol), (engine, n)


def test_the_torch_engine_matches_transformers_to_1e_4_nats(smollm2):
    from psymetrics_core.api import session_or_default

    torch_engine = session_or_default().make_backend("smollm2", {"native": "torch"})
    assert torch_engine.scoring_engine() == "torch"
    prompts, comps = _score(torch_engine, SCENARIOS[:1])
    for prompt, comp in zip(prompts, comps, strict=True):
        want = _reference(smollm2, prompt)
        assert comp.option_logprobs == pytest.approx([w for w, _ in want], abs=1e-4)


def test_the_end_of_turn_tokens_are_scored(smollm2, scored):
    """SmolLM2's template ends an assistant turn with <|im_end|> and a newline: two tokens more
    than the reply alone, and a different sum."""
    prompts, comps = scored
    reply = prompts[0].options[0].continuation
    context = smollm2.context_text(prompts[0])
    alone = smollm2._encode(context + reply)[len(smollm2._encode(context)) :]
    assert comps[0].meta["option_tokens"][0] == len(alone) + 2
    bare = smollm2.loglikelihoods(context, [reply])[0]
    assert comps[0].option_logprobs[0] < bare
