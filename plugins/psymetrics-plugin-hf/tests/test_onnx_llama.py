"""The ONNX Runtime Llama engine (psymetrics-plugin-llama-engine's ``onnx_llama``) on a tiny
random Llama against transformers' LlamaForCausalLM (grouped-query attention, rotary
embeddings, a shared-prefix cache, the last layer's kept positions), its safetensors reader
against the safetensors library, and its handling of damaged inputs (weights file, cached graph
file); the hf backend's choice of engine, with and without the engine distribution."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from psymetrics_core.api import BackendError


@pytest.fixture(scope="module", autouse=True)
def _needs_the_engine() -> None:
    """Skips without onnxruntime or the optional engine distribution, imported when the tests
    run, not while every worker collects."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("psymetrics_plugin_llama_engine")


def _random_llama(directory: Path, seed: int, **config: Any) -> tuple[Path, Any]:
    """A random 2-layer Llama (4 query heads over 2 key/value heads) saved as safetensors,
    with the word-level tokenizer below."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        rms_norm_eps=1e-5,
        max_position_embeddings=256,
        **config,
    )
    model = LlamaForCausalLM(cfg).eval()
    model.save_pretrained(directory, safe_serialization=True)
    _tiny_tokenizer(directory)
    return directory, model


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """Head size 16: 4 heads x 16 = the hidden size; the output head tied to the embeddings."""
    return _random_llama(tmp_path_factory.mktemp("tiny-llama"), 0, tie_word_embeddings=True)


def _tiny_tokenizer(directory: Path) -> None:
    """A 97-token word-level tokenizer (words, digits, one unknown token)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["<unk>", "</s>"] + [str(i) for i in range(10)]
    words += "one two three four five six seven eight nine ten a b c".split()
    vocab = {w: i for i, w in enumerate(words + [f"w{i}" for i in range(97 - len(words))])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(directory / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": "<unk>",
        "eos_token": "</s>",
        "pad_token": "</s>",
    }
    (directory / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")


@pytest.fixture(scope="module")
def narrow_heads_llama(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """Head size 8: 4 heads x 8 = 32 differs from the hidden size 64; an untied output head."""
    directory = tmp_path_factory.mktemp("narrow-llama")
    return _random_llama(directory, 1, head_dim=8, tie_word_embeddings=False)


def _engine(directory: Path, graphs: Path) -> Any:
    from psymetrics_plugin_llama_engine.onnx_llama import load_onnx

    return load_onnx(directory, 1, graphs)


def _reference(model: Any, ids: np.ndarray) -> np.ndarray:
    import torch

    with torch.inference_mode():
        logits = model(input_ids=torch.from_numpy(ids)).logits.double()  # an exact log-softmax
        return torch.log_softmax(logits, -1).numpy()


def test_native_support_accepts_the_tiny_llama(tiny_llama: tuple[Path, Any]) -> None:
    from psymetrics_plugin_llama_engine.native_llama import native_support

    assert native_support(tiny_llama[0]) is None


@pytest.mark.parametrize(("model", "head_dim"), [("tiny_llama", 16), ("narrow_heads_llama", 8)])
def test_forward_equals_transformers(
    request: pytest.FixtureRequest, model: str, head_dim: int, tmp_path: Path
) -> None:
    """Log-probabilities of every position; with head size 8 the attention output (4 x 8 = 32)
    is narrower than the hidden size (64) and the output head is untied."""
    directory, reference = request.getfixturevalue(model)
    engine = _engine(directory, tmp_path)
    ids = np.random.default_rng(1).integers(0, 97, size=(2, 23))
    theirs = _reference(reference, ids)
    hidden, cache = engine.forward(ids)
    ours = np.stack([engine.log_probs(hidden[b]) for b in range(2)])
    assert np.abs(ours - theirs).max() < 1e-4
    assert len(cache) == 2 and cache[0][0].shape == (2, 2, 23, head_dim)  # rows, kv heads, t, d


def test_prefix_cache_and_kept_positions(tiny_llama: tuple[Path, Any], tmp_path: Path) -> None:
    """Rows continuing a shared 9-token prefix, right-padded to one width, read at chosen
    positions, equal the unbatched full computation of each row at those positions."""
    directory, model = tiny_llama
    engine = _engine(directory, tmp_path)
    rng = np.random.default_rng(2)
    prefix = rng.integers(0, 97, size=9)
    tails = [rng.integers(0, 97, size=n) for n in (5, 3)]
    _, cache = engine.forward(prefix[None, :])
    past = engine.prefix(cache, 0, 9)
    batch = np.zeros((2, 5), dtype=np.int64)  # pad id 0 after the short row
    for b, tail in enumerate(tails):
        batch[b, : len(tail)] = tail
    hidden, _ = engine.forward(batch, past, keep=np.array([2, 4]))
    for b, tail in enumerate(tails):
        full = _reference(model, np.concatenate([prefix, tail])[None, :])[0]
        # kept position 2 is full position 9 + 2 for both rows (the short row's last token)
        assert np.abs(engine.log_probs(hidden[b, 0]) - full[11]).max() < 1e-4
    full0 = _reference(model, np.concatenate([prefix, tails[0]])[None, :])[0]
    assert np.abs(engine.log_probs(hidden[0, 1]) - full0[13]).max() < 1e-4


def test_graph_file_is_reused_and_a_damaged_one_rebuilt(
    tiny_llama: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from psymetrics_plugin_llama_engine import onnx_llama

    built: list[bool] = []
    real = onnx_llama._layer_graph

    def spy(shape: Any, last: bool) -> bytes:
        built.append(last)
        return real(shape, last)

    monkeypatch.setattr(onnx_llama, "_layer_graph", spy)
    ids = np.array([[5, 6, 7, 8]])
    first = _engine(tiny_llama[0], tmp_path).forward(ids)[0]
    assert sorted(built) == [False, True] and len(list(tmp_path.glob("*.onnx"))) == 2
    _engine(tiny_llama[0], tmp_path)
    assert len(built) == 2  # both graphs came from the files
    for path in tmp_path.glob("*.onnx"):
        path.write_bytes(b"\x00not a graph")
    again = _engine(tiny_llama[0], tmp_path).forward(ids)[0]
    assert len(built) == 4 and np.array_equal(first, again)
    assert all(p.read_bytes().startswith(b"\x08") for p in tmp_path.glob("*.onnx"))  # rebuilt


def test_read_safetensors_equals_the_safetensors_library(tmp_path: Path) -> None:
    from psymetrics_plugin_llama_engine.onnx_llama import read_safetensors
    from safetensors.numpy import load_file, save_file

    arrays = {"a": np.arange(12, dtype=np.float32).reshape(3, 4), "b": np.ones(5, np.float32)}
    save_file(arrays, str(tmp_path / "w.safetensors"))
    ours = read_safetensors(tmp_path / "w.safetensors")
    theirs = load_file(str(tmp_path / "w.safetensors"))
    assert sorted(ours) == sorted(theirs)
    for k in theirs:
        assert np.array_equal(ours[k], theirs[k]) and ours[k].shape == theirs[k].shape


def test_native_choice_and_engine_identity(
    tiny_llama: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from psymetrics_plugin_hf.hf import HFBackend
    from psymetrics_plugin_llama_engine import onnx_llama

    path = str(tiny_llama[0])
    assert HFBackend({"pretrained": path}).scoring_engine() == "onnxruntime"
    assert HFBackend({"pretrained": path}).identity()["option_scoring"] == "onnxruntime"
    assert HFBackend({"pretrained": path, "native": "torch"}).scoring_engine() == "torch"
    assert HFBackend({"pretrained": path, "native": "false"}).scoring_engine() == "transformers"
    assert HFBackend({"pretrained": path, "dtype": "bfloat16"}).scoring_engine() == "transformers"
    with pytest.raises(BackendError, match="native must be true, false, onnx or torch"):
        HFBackend({"pretrained": path, "native": "fast"})
    # without onnxruntime installed: torch, unless onnx was asked for by name
    monkeypatch.setattr(onnx_llama, "onnx_available", lambda: False)
    assert HFBackend({"pretrained": path}).scoring_engine() == "torch"
    with pytest.raises(BackendError, match="native=onnx needs onnxruntime"):
        HFBackend({"pretrained": path, "native": "onnx"}).scoring_engine()
    # without psymetrics-plugin-llama-engine: transformers scores, unless an engine was named
    from psymetrics_plugin_hf import hf

    real = hf.find_spec
    absent = lambda name: None if "llama_engine" in name else real(name)  # noqa: E731
    monkeypatch.setattr(hf, "find_spec", absent)
    assert HFBackend({"pretrained": path}).scoring_engine() == "transformers"
    for native in ("onnx", "torch"):
        with pytest.raises(BackendError, match="pip install psymetrics-plugin-llama-engine"):
            HFBackend({"pretrained": path, "native": native}).scoring_engine()


def test_tiny_llama_option_scores_agree_across_engines(tiny_llama: tuple[Path, Any]) -> None:
    """The hf backend's option scores through ONNX Runtime, the torch pass and transformers'
    own model (native=false) agree within float error."""
    from psymetrics_plugin_hf.hf import HFBackend

    from psymetrics_core.api import GenerationSettings, Option, Prompt

    prompts = [
        Prompt(
            messages=({"role": "user", "content": text},),
            options=(Option(1, "a"), Option(2, "b"), Option(3, "c")),
            text="",
        )
        for text in ("one two three", "one two four five", "six")
    ]
    scores = {}
    for native in ("onnx", "torch", "false"):
        be = HFBackend({"pretrained": str(tiny_llama[0]), "native": native, "chat_template": "0"})
        out = be.option_logprobs(prompts, GenerationSettings(mode="logprob"))
        scores[native] = np.array([c.option_logprobs for c in out])
        engine = None if be._native is None else type(be._native[0]).__name__
        assert engine == {"onnx": "OnnxLlama", "torch": "NativeLlama", "false": None}[native]
    assert np.isfinite(scores["false"]).all() and np.ptp(scores["false"]) > 1e-3
    assert np.abs(scores["onnx"] - scores["false"]).max() < 1e-4
    assert np.abs(scores["torch"] - scores["false"]).max() < 1e-4


# personas that begin alike (as generated trait-marker profiles do) and one that does not:
# every persona's own word (w50, w51, w52, w53) marks where its prefix is computed
_SHARED = " ".join(f"w{i}" for i in range(10, 40))  # 30 words: more than the 16 of a group
_TAIL = " ".join(f"w{i}" for i in range(54, 72))  # 18 words after each one's own word
_PERSONAS = [f"{_SHARED} w5{k} {_TAIL}" for k in range(3)] + [f"w90 w53 {_TAIL}"]
_MARKS = ("w50", "w51", "w52", "w53")


def _population(tmp_path: Path) -> Path:
    from psymetrics_core.records.population import Respondent, population_line

    lines = [population_line(Respondent(f"p{k}", text)) for k, text in enumerate(_PERSONAS)]
    path = tmp_path / "population.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _count_marks(directory: Path, native: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """An hf backend on ``directory`` whose forward passes count, per persona mark, the token
    rows (prefix passes and batches alike) that feed it to the model."""
    from collections import Counter

    from psymetrics_plugin_hf.hf import HFBackend
    from psymetrics_plugin_llama_engine.onnx_llama import OnnxLlama

    be = HFBackend(
        {"pretrained": str(directory), "native": native, "chat_template": "0", "batch_size": "3"}
    )
    vocab = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))
    marks = {vocab["model"]["vocab"][m]: m for m in _MARKS}
    fed: Counter[str] = Counter()

    def count(ids: Any) -> None:
        for row in np.asarray(ids).tolist():
            fed.update(marks[t] for t in set(row) if t in marks)

    real = OnnxLlama.forward
    monkeypatch.setattr(
        OnnxLlama, "forward", lambda s, ids, *a, **k: (count(ids), real(s, ids, *a, **k))[1]
    )
    if native == "false":
        be._load()
        be._model.register_forward_pre_hook(
            lambda _m, args, kwargs: count(kwargs["input_ids"].cpu()), with_kwargs=True
        )
    return be, fed


@pytest.mark.parametrize("native", ["onnx", "false"])
def test_population_persona_prefix_is_computed_once_per_respondent(
    tiny_llama: tuple[Path, Any], tmp_path: Path, native: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A population run (psym eval --population) through the hf backend runs each persona
    through the model once for all the respondent's items, on the ONNX engine and on
    transformers (batches of 3 rows, so 4 items per respondent span two batches), also where
    personas begin with the same 30 words; the scores equal the unshared computation's."""
    from psymetrics_plugin_hf.hf import HFBackend

    from psymetrics_core import evaluate

    population = _population(tmp_path)
    be, fed = _count_marks(tiny_llama[0], native, monkeypatch)
    run = {"mode": "logprob", "limit": 4, "population": population, "cache": False}
    evaluate(["bfi"], backend=be, output=tmp_path / "shared", **run)
    assert dict(fed) == {m: 1 for m in _MARKS}  # once per respondent, not once per item
    # prefix_cache=false: every prompt on its own (transformers, no shared prefix)
    alone = HFBackend(
        {"pretrained": str(tiny_llama[0]), "prefix_cache": "false", "chat_template": "0"}
    )
    evaluate(["bfi"], backend=alone, output=tmp_path / "alone", **run)
    shared = _read_scores(tmp_path / "shared")
    plain = _read_scores(tmp_path / "alone")
    assert len(shared) == 4 * len(_PERSONAS) and shared.keys() == plain.keys()
    for key, scores in shared.items():
        assert scores == pytest.approx(plain[key], abs=1e-4)


def _read_scores(out: Path) -> dict[tuple[str, str], list[float]]:
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return {(r["condition"], r["item"]): list(r["option_logprobs"].values()) for r in rows}


def test_prefix_passes_in_slices_score_the_same(
    tiny_llama: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ONNX scorer's prefix passes cut into slices (``prefix_budget``: one group per pass
    here) still feed each persona once and give the scores of one pass."""
    from psymetrics_plugin_hf import hf_fast

    from psymetrics_core.api import Option, Prompt

    be, fed = _count_marks(tiny_llama[0], "onnx", monkeypatch)
    assert be._native_engine() is not None
    options = (Option(1, "a"), Option(2, "b"), Option(3, "c"))
    prompts = [
        Prompt(({"role": "system", "content": p}, {"role": "user", "content": item}), options, "")
        for p in _PERSONAS
        for item in ("one two", "three", "four five six", "seven")
    ]
    whole = hf_fast.score_prompts_native(be, prompts, None, None)
    assert dict(fed) == {m: 1 for m in _MARKS}
    passes: list[int] = []
    real = hf_fast._group_pasts

    def counted(engine: Any, part: Any, *rest: Any) -> Any:
        passes.append(len(part))
        return real(engine, part, *rest)

    monkeypatch.setattr(hf_fast, "_group_pasts", counted)
    sliced = hf_fast.score_prompts_native(be, prompts, None, None, prefix_budget=1)
    assert len(passes) == len(_PERSONAS) and set(passes) == {1}
    assert dict(fed) == {m: 2 for m in _MARKS}  # once more each, in the second call
    for a, b in zip(whole, sliced, strict=True):
        assert a.option_logprobs == pytest.approx(b.option_logprobs, abs=1e-5)
