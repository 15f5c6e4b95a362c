"""The OpenAI backends' logprob paths against a real server: llama-cpp-python serving the
SmolLM2 GGUF (chat ``top_logprobs``, completions ``echo``), which ``transformers serve``
(test_backend_transformers_serve.py) does not offer, and whole replies of value-portrait
scored through ``openai-completions`` with the GGUF's own chat template, against the ``hf``
backend and llama-cpp-python's in-process computation.

llama-cpp-python compiles llama.cpp (about 7 minutes on 2 cores), so it is not part of
``make setup``: ``make llama-server`` installs it, and CI runs that target before ``make test``
(``.ci/run``). Elsewhere the test skips and says how to install it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from model_server import free_port, running
from psymetrics_plugin_hf.local_model import smollm2_location

from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.backends.openai_completions import OpenAICompletionsBackend
from psymetrics_core.base.types import Option, Prompt
from psymetrics_core.cli import cli

pytestmark = [
    pytest.mark.integration,  # a real third-party server
    pytest.mark.model,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="llama-cpp-python is not installed (make llama-server installs it)",
    ),
]
N = 4


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m llama_cpp.server`` on a free loopback port; stopped after the module."""
    folder, name = smollm2_location()
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(folder / name),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--logits_all",
        "true",
        "--model_alias",
        "smollm2",
        "--n_threads",
        "2",
    ]
    base = f"http://127.0.0.1:{port}/v1"
    with running(cmd, f"{base}/models", log):
        yield base


def _eval(tmp: Path, model: str, base: str, mode: str, n: int = N, *extra: str) -> dict:
    out = tmp / f"{model}-{mode}"
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "--tasks",
            "bfi",
            "--limit",
            str(n),
            "--mode",
            mode,
            "--model",
            model,
            "--model-args",
            f"base_url={base},model=smollm2",
            "--output",
            str(out),
            "--concurrency",
            "2",
            *extra,
        ],
    )
    assert res.exit_code == 0, res.output
    results = json.loads((out / "results.json").read_text())
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == n
    return {"results": results, "samples": samples}


@pytest.mark.parametrize("mode", ["generate", "logprob"])
def test_psym_eval_bfi_through_llama_cpp_chat(
    llama_server: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    run = _eval(tmp_path, "openai-chat", llama_server, mode)
    usage = run["results"]["usage"]
    assert usage["requests"] == N and usage["prompt_tokens"] > 20 * N
    for s in run["samples"]:
        if mode == "logprob":
            lps = list(s["option_logprobs"].values())
            assert len(lps) == 5 and max(lps) <= 0.0
            # the answer is the option the server gave the highest log-probability
            best = max(s["option_logprobs"], key=lambda k: s["option_logprobs"][k])
            assert s["answer"] == int(best) and s["parse_status"] == "ok"
        else:
            assert s["completion"] is not None
            assert s["answer"] is None or 1 <= s["answer"] <= 5
    # the same command again (--resume: the run directory exists) is served from the cache: no
    # request reaches the server
    again = _eval(tmp_path, "openai-chat", llama_server, mode, N, "--resume")
    assert again["results"]["cache"] == {**again["results"]["cache"], "hits": N, "misses": 0}
    assert again["results"]["usage"]["requests"] == 0
    assert [s["answer"] for s in again["samples"]] == [s["answer"] for s in run["samples"]]


def test_completions_echo_logprobs_through_llama_cpp(llama_server: str) -> None:
    """One prompt, one echo request per option, real prompt log-probabilities.

    A short prompt: llama-cpp-python sorts the whole 49,152-token vocabulary in Python for
    every echoed token (about 65 ms of CPU per token here, so several seconds per request for
    a rendered BFI item), and what is checked, psym reading llama.cpp's echoed ``text_offset``
    and ``token_logprobs``, does not depend on the prompt's length. ``psym eval --mode
    logprob`` through openai-completions end to end: test_backend_openai.py."""
    options = tuple(Option(v, f"label {v}") for v in range(1, 6))
    text = "I am talkative. Rate it 1-5:"
    prompt = Prompt(messages=({"role": "user", "content": text},), options=options, text=text)
    be = OpenAICompletionsBackend({"base_url": llama_server, "model": "smollm2"})
    (c,) = be.option_logprobs([prompt], GenerationSettings(mode="logprob"))
    assert be.usage()["requests"] == 5  # one echo request per option
    lps = c.option_logprobs
    assert len(lps) == 5 and all(v < 0 for v in lps)
    assert len(set(lps)) > 1  # real prompt logprobs, not a constant


def _value_portrait(tmp: Path, name: str, model: str, model_args: str) -> list[dict]:
    """``psym eval --tasks value-portrait --limit 1`` (one scenario, five replies): samples."""
    out = tmp / name
    args = ["eval", "--tasks", "value-portrait", "--limit", "1", "--no-cache", "--model", model]
    res = CliRunner().invoke(cli, [*args, "--model-args", model_args, "--output", str(out)])
    assert res.exit_code == 0, res.output + str(res.exception)
    return [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]


def _in_process(gguf: Path, context: str, replies: list[str]) -> list[tuple[float, int]]:
    """llama-cpp-python's own computation: ``Llama(logits_all=True)`` evaluates the tokens the
    server evaluates (the text tokenized with special tokens, as its completions do) and the
    reply's tokens are read from the log-softmax of the logits before each."""
    import numpy as np
    from llama_cpp import Llama

    llm = Llama(str(gguf), n_ctx=2048, logits_all=True, n_threads=2, verbose=False)
    n_ctx = len(llm.tokenize(context.encode(), add_bos=False, special=True))
    out = []
    for reply in replies:
        tokens = llm.tokenize((context + reply).encode(), add_bos=False, special=True)
        llm.reset()
        llm.eval(tokens)
        logits = np.asarray(llm.scores[: len(tokens)], dtype=np.float64)
        shifted = logits - logits.max(axis=1, keepdims=True)
        logsm = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        picked = [logsm[i - 1, tokens[i]] for i in range(n_ctx, len(tokens))]
        out.append((float(sum(picked)), len(picked)))
    return out


# Measured on this GGUF (SmolLM2-135M-Instruct Q4_1), scenario 1025's five replies (45-49
# tokens each, end of turn included). llama.cpp multiplies the 4-bit weights with activations
# quantised to 8 bits, transformers (the hf backend) the dequantised weights in float32: per
# token the two differ by 0.042 nats at the median, 0.16 at the 90th percentile and 0.32 at
# most (239 tokens), spread over the tokens, not on a few; summed per reply the gaps were
# 1.454, 0.149, 0.063, 0.345 and 0.086 nats (0.030 nats per token at most), and the five
# replies rank alike. The bars sit just above: 1.6 nats per reply, 0.035 per token.
HF_GAP, HF_GAP_PER_TOKEN = 1.6, 0.035
# llama.cpp's server against llama-cpp-python evaluating the same tokens in process: the same
# kernels, measured 2.7e-6 nats per reply at most (the server's float32 log-softmax against
# this test's float64 one); the bar: 1e-5
SAME_GAP = 1e-5


def test_value_portrait_through_llama_cpp_with_the_ggufs_template(
    llama_server: str, tmp_path: Path
) -> None:
    """The generation probability of whole replies (issue 33) from llama.cpp's server through
    ``openai-completions`` with the GGUF's own chat template, against the hf backend on the
    same GGUF and against llama-cpp-python's own in-process computation."""
    from psymetrics_core.backends.chat_template import load_chat_template

    folder, name = smollm2_location()
    gguf = folder / name
    # one request at a time, never retried: llama-cpp-python sorts the vocabulary in Python for
    # every echoed token (about 65 ms each here), so a 280-token reply takes tens of seconds
    server_args = (
        f"base_url={llama_server},model=smollm2,chat_template={gguf},concurrency=1,"
        "max_retries=0,timeout=1800,deadline=1800"
    )
    (served,) = _value_portrait(tmp_path, "server", "openai-completions", server_args)
    hf_args = f"pretrained={folder},gguf_file={name},native=false"
    (local,) = _value_portrait(tmp_path, "hf", "hf", hf_args)
    assert served["data"]["logprob_source"] == "echo"
    ids = list(local["data"]["logprobs"])
    assert len(ids) == 5
    # the same tokens: the template's rendering and end of turn agree with transformers'
    assert served["data"]["tokens"] == local["data"]["tokens"]
    gaps = [abs(served["data"]["logprobs"][i] - local["data"]["logprobs"][i]) for i in ids]
    print("llama.cpp server vs hf, nats per reply:", [round(g, 4) for g in gaps])
    assert max(gaps) < HF_GAP
    assert (
        max(g / local["data"]["tokens"][i] for g, i in zip(gaps, ids, strict=True))
        < HF_GAP_PER_TOKEN
    )
    assert sorted(ids, key=served["data"]["logprobs"].get) == sorted(
        ids, key=local["data"]["logprobs"].get
    )
    template = load_chat_template(str(gguf))
    messages = served["prompt"]["messages"]
    replies = [o["continuation"] + template.turn_end(messages) for o in served["prompt"]["options"]]
    own = _in_process(gguf, template.context(messages), replies)
    same = [abs(served["data"]["logprobs"][i] - lp) for i, (lp, _) in zip(ids, own, strict=True)]
    print("llama.cpp server vs in-process llama-cpp-python:", [f"{g:.2e}" for g in same])
    assert [n for _, n in own] == [served["data"]["tokens"][i] for i in ids]
    assert max(same) < SAME_GAP
