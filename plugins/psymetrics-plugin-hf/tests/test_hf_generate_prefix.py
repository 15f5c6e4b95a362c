"""Generation mode of the ``hf`` backend on a tiny random Llama: a population respondent's
persona (a shared prompt prefix) runs through the model once per respondent, not once per
item, and greedy answers are the same with and without that sharing (``prefix_cache=false``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from psymetrics_core.api import GenerationSettings, Option, Prompt


@pytest.fixture(scope="module", autouse=True)
def _needs_transformers() -> None:
    """Skips without transformers, imported when the tests run, not while every worker collects
    (transformers and torch: 2 s of CPU)."""
    pytest.importorskip("transformers")


_WORDS = ["<unk>", "</s>"] + [f"w{i}" for i in range(95)]


@pytest.fixture(scope="module")
def tiny_llama_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer Llama saved as safetensors, with a word-level tokenizer (w0..w94)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM

    directory = tmp_path_factory.mktemp("tiny-llama-generate")
    torch.manual_seed(3)
    cfg = LlamaConfig(
        vocab_size=len(_WORDS),
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        eos_token_id=1,
        pad_token_id=1,
        bos_token_id=0,
    )
    LlamaForCausalLM(cfg).eval().save_pretrained(directory, safe_serialization=True)
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(_WORDS)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(directory / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": "<unk>",
        "eos_token": "</s>",
        "pad_token": "</s>",
    }
    (directory / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def _persona(respondent: int) -> list[str]:
    """20 or 23 words; respondents share the first 4 (as "a character who is ...")."""
    own = [f"w{20 + respondent * 25 + i}" for i in range(16 + 3 * respondent)]
    return ["w10", "w11", "w12", "w13"] + own


def _prompts() -> list[Prompt]:
    """Two respondents x three items of different lengths (so the batch is padded)."""
    out = []
    for respondent in range(2):
        system = " ".join(_persona(respondent))
        for item in range(3):
            text = " ".join(f"w{80 + item + k}" for k in range(item + 1))
            messages = ({"role": "system", "content": system}, {"role": "user", "content": text})
            out.append(Prompt(messages=messages, options=(Option(1, "w2"),), text=text))
    return out


def _persona_passes(backend: Any, prompts: list[Prompt]) -> tuple[list[str], int]:
    """Greedy answers, and how many input rows carried a respondent's persona-only tokens."""
    backend._load()
    distinct = {tuple(backend._tok.convert_tokens_to_ids(_persona(r)[4:])) for r in range(2)}
    seen: list[list[int]] = []
    embed = backend._model.get_input_embeddings()
    hook = embed.register_forward_hook(lambda _m, args, _o: seen.extend(args[0].tolist()))
    try:
        settings = GenerationSettings(max_new_tokens=6, temperature=0.0)
        reached: dict[int, str] = {}
        out = backend.generate(
            prompts, settings, on_result=lambda i, c: reached.setdefault(i, c.text)
        )
        texts = [f"{c.text}|{c.meta['finish_reason']}" for c in out]
        assert reached == {i: c.text for i, c in enumerate(out)}  # each prompt's own answer
    finally:
        hook.remove()

    def carries(row: list[int], words: tuple[int, ...]) -> bool:
        return any(tuple(row[i : i + len(words)]) == words for i in range(len(row)))

    return texts, sum(1 for row in seen for words in distinct if carries(row, words))


@pytest.mark.parametrize("batch_size", ["4", "8"])  # a batch per respondent; both in one batch
def test_generate_runs_each_persona_once_and_answers_alike(
    tiny_llama_dir: Path, batch_size: str
) -> None:
    from psymetrics_plugin_hf.hf import HFBackend

    prompts = _prompts()
    args = {"pretrained": str(tiny_llama_dir), "batch_size": batch_size, "native": "false"}
    shared_texts, shared_passes = _persona_passes(HFBackend(args), prompts)
    plain = HFBackend({**args, "prefix_cache": "false"})
    plain_texts, plain_passes = _persona_passes(plain, prompts)
    assert plain_passes == len(prompts)  # every item recomputes its respondent's persona
    assert shared_passes == 2  # once per respondent
    assert shared_texts == plain_texts
    assert any(t.strip() for t in shared_texts)  # answers were generated, not empty
    # sampled generation keeps plain batches (its seeds follow the batch order): no sharing
    sampled = HFBackend(args)
    sampled._load()
    settings = GenerationSettings(max_new_tokens=3, temperature=0.7, seed=5)
    again = HFBackend({**args, "prefix_cache": "false"})
    assert [c.text for c in sampled.generate(prompts, settings)] == [
        c.text for c in again.generate(prompts, settings)
    ]
