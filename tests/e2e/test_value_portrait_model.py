"""Generation probabilities on the real default model (SmolLM2 through the llama engine, as
``psym eval`` scores by default) equal Song et al.'s computation done directly in transformers.

The reference follows their RQ1/ecological.py: the chat with the user's query and the
assistant's reply, formatted without a generation prompt, minus the tokens of the query formatted
with one; the reply's log-probability is the sum over every remaining token (the reply and the
end-of-turn tokens) of one plain transformers forward pass, its float32 logits log-softmaxed in
float64 (torch's float32 ``log_softmax`` on a CPU reads every token about 8.6e-6 nats high over
the 49,152-token vocabulary, 4e-4 nats over a 48-token reply: a bias of that kernel, not of the
model; Song et al. score on GPUs through vLLM). Three short queries (15 pairs, ShareGPT and
LMSYS) keep ``make test`` short; a Reddit or Dear Abby scenario differs only in the text framing
its query.

Measured on these pairs (26 to 42 scored tokens): the ONNX Runtime engine, the default on a CPU,
agrees within 9.1e-5 nats per reply (root mean square 3.8e-5, -3e-7 nats per token on average);
the torch engine (``native=torch``) within 6.5e-5. Every engine is held to 1e-4 nats per reply
(the torch engine and transformers' own scoring, ``native=false``, on one scenario to keep the
test short), the default engine also to no bias per token.
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
        logp = torch.log_softmax(logits.double(), dim=-1)
        total = sum(float(logp[i - 1, ids[i]]) for i in range(len(head), len(ids)))
        out.append((total, len(ids) - len(head)))
    return out


def test_reply_log_probabilities_match_a_direct_transformers_computation(smollm2, scored):
    prompts, comps = scored
    assert len(comps) == len(SCENARIOS)
    offsets, tokens = [], 0
    for prompt, comp in zip(prompts, comps, strict=True):
        want = _reference(smollm2, prompt)
        assert comp.meta["option_tokens"] == [n for _, n in want]
        assert comp.option_logprobs == pytest.approx([w for w, _ in want], abs=1e-4)
        offsets += [got - w for got, (w, _) in zip(comp.option_logprobs, want, strict=True)]
        tokens += sum(n for _, n in want)
    # no bias per token: torch's float32 log_softmax put the reference 8.6e-6 nats high
    assert abs(sum(offsets) / tokens) < 2e-6


@pytest.mark.parametrize("native", ["torch", "false"])
def test_the_other_engines_match_transformers_to_1e_4_nats(smollm2, native):
    """The torch engine and transformers itself (``native=false``), on one scenario each."""
    from psymetrics_core.api import session_or_default

    backend = session_or_default().make_backend("smollm2", {"native": native})
    assert backend.scoring_engine() == {"torch": "torch", "false": "transformers"}[native]
    prompts, comps = _score(backend, SCENARIOS[:1])
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
