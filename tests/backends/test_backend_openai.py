"""OpenAI-compatible backends against a local HTTP server (benchmarks/latency_server.py).

The server is a stand-in for an API (no model): it answers deterministically from a hash of
each request, so expected values below are recomputed from the same rule.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from benchmarks.latency_server import LatencyServer, _h  # noqa: E402
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.backends.openai_chat import OpenAIChatBackend
from psymetrics_core.backends.openai_completions import OpenAICompletionsBackend
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import Option, Prompt
from psymetrics_core.cli import cli

OPTS = tuple(Option(v, f"label {v}") for v in range(1, 6))


def _prompts(n: int) -> list[Prompt]:
    return [
        Prompt(messages=({"role": "user", "content": f"statement {i}"},), options=OPTS, text="")
        for i in range(n)
    ]


def _chat(srv: LatencyServer, **extra: str) -> OpenAIChatBackend:
    return OpenAIChatBackend({"base_url": srv.base_url, "model": "m", "backoff": "0.01", **extra})


def test_chat_generate_bounded_concurrency() -> None:
    with LatencyServer(latency=0.1) as srv:
        be = _chat(srv, concurrency="4")
        out = be.generate(_prompts(12), GenerationSettings())
        assert srv.requests == 12
        assert srv.peak == 4  # never more than 4 in flight, and the bound is used
    for p, c in zip(_prompts(12), out, strict=True):
        expected = str(1 + _h(json.dumps(list(p.messages), sort_keys=True)) % 5)
        assert c.text == expected  # answers stay aligned with their prompts
    assert be.usage() == {
        "requests": 12,
        "retries": 0,
        "prompt_tokens": 120,
        "completion_tokens": 12,
        "total_tokens": 132,
    }


def test_retries_on_429_and_5xx_but_not_on_400() -> None:
    with LatencyServer(latency=0.0, fail=[429, 500, 503]) as srv:
        be = _chat(srv, concurrency="1")
        out = be.generate(_prompts(1), GenerationSettings())
        assert srv.requests == 4 and out[0].text
        assert be.usage()["retries"] == 3
    with LatencyServer(latency=0.0, fail=[400]) as srv:
        with pytest.raises(BackendError, match="HTTP 400"):
            _chat(srv).generate(_prompts(1), GenerationSettings())
        assert srv.requests == 1  # a content error is not retried
    with LatencyServer(latency=0.0, fail=[500] * 10) as srv:
        with pytest.raises(BackendError, match="gave up after 3 attempts"):
            _chat(srv, max_retries="2").generate(_prompts(1), GenerationSettings())
        assert srv.requests == 3


def test_timeout_is_retried_then_reported() -> None:
    with LatencyServer(latency=1.0) as srv:
        with pytest.raises(BackendError, match="gave up after 2 attempts"):
            _chat(srv, timeout="0.2", max_retries="1").generate(_prompts(1), GenerationSettings())
        assert srv.requests == 2


def test_chat_logprobs_from_top_logprobs() -> None:
    p = _prompts(1)[0]
    with LatencyServer(latency=0.0) as srv:
        be = _chat(srv, top_logprobs="5")
        (c,) = be.option_logprobs([p], GenerationSettings(mode="logprob"))
        body = srv.bodies[0]
    assert body["logprobs"] is True and body["top_logprobs"] == 5 and body["max_tokens"] == 1
    # the server's rule: logprob of token v is -(h(messages + v) % 1000) / 100; it returns the
    # top 5 of the tokens 0..6, so options outside the top 5 must come back as -inf
    text = json.dumps(list(p.messages), sort_keys=True)
    table = {v: -((_h(text + str(v)) % 1000) / 100.0) for v in range(0, 7)}
    top5 = sorted(table, key=lambda v: -table[v])[:5]
    expected = [table[v] if v in top5 else -math.inf for v in range(1, 6)]
    assert c.option_logprobs == pytest.approx(tuple(expected))


def test_chat_logprobs_unsupported_is_a_clear_error() -> None:
    with LatencyServer(latency=0.0, chat_logprobs=False) as srv:
        with pytest.raises(BackendError, match="does not offer logprobs"):
            _chat(srv).option_logprobs(_prompts(1), GenerationSettings(mode="logprob"))


def test_completions_echo_logprobs() -> None:
    p = _prompts(1)[0]
    with LatencyServer(latency=0.0) as srv:
        be = OpenAICompletionsBackend({"base_url": srv.base_url, "model": "m"})
        (c,) = be.option_logprobs([p], GenerationSettings(mode="logprob"))
        assert srv.requests == 5  # one echo request per option
    ctx = "statement 0"
    # one-character tokens: the option's single character at offset len(ctx)
    expected = [-((_h(ctx + str(v)) % 1000) / 100.0) for v in range(1, 6)]
    assert c.option_logprobs == pytest.approx(tuple(expected))
    with LatencyServer(latency=0.0, echo=False) as srv:
        be = OpenAICompletionsBackend({"base_url": srv.base_url, "model": "m"})
        with pytest.raises(BackendError, match="no prompt logprobs"):
            be.option_logprobs([p], GenerationSettings(mode="logprob"))


def test_bad_arguments_are_one_line_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BackendError, match="base_url=URL,model=NAME"):
        OpenAIChatBackend({"model": "m"})
    with pytest.raises(BackendError, match="api_key_env=NAME"):
        OpenAIChatBackend({"base_url": "http://x/v1", "model": "m", "api_key": "sk-1"})
    with pytest.raises(BackendError, match="unknown --model-args"):
        OpenAIChatBackend({"base_url": "http://x/v1", "model": "m", "temp": "1"})
    monkeypatch.delenv("PSYM_TEST_UNSET_KEY", raising=False)
    be = OpenAIChatBackend(
        {"base_url": "http://x/v1", "model": "m", "api_key_env": "PSYM_TEST_UNSET_KEY"}
    )
    with pytest.raises(BackendError, match="PSYM_TEST_UNSET_KEY"):
        be.generate(_prompts(1), GenerationSettings())


def test_api_key_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-test-6f1d2a9c0b7e4d3f"
    monkeypatch.setenv("PSYM_TEST_API_KEY", key)
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    with LatencyServer(latency=0.0, api_key=key) as srv:
        for mode in ("generate", "logprob"):
            res = CliRunner().invoke(
                cli,
                [
                    "eval",
                    "--tasks",
                    "bfi",
                    "--limit",
                    "6",
                    "--mode",
                    mode,
                    "--model",
                    "openai-chat",
                    "--output",
                    str(out / mode),
                    "--concurrency",
                    "3",
                    "--model-args",
                    f"base_url={srv.base_url},model=m,api_key_env=PSYM_TEST_API_KEY",
                ],
            )
            assert res.exit_code == 0, res.output
        assert srv.requests == 12  # the server accepted the key (it answers 401 otherwise)
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert any(f.name == "responses.sqlite3" for f in files)
    assert any(f.name == "results.json" for f in files)
    for f in files:
        assert key.encode() not in f.read_bytes(), f
    results = json.loads((out / "logprob" / "results.json").read_text())
    assert results["model_args"]["api_key_env"] == "PSYM_TEST_API_KEY"
    assert results["usage"]["requests"] == 6
    assert results["cache"]["misses"] == 6


def _cli_eval(out: Path, model: str, base: str, n: int, *extra: str) -> dict:
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "--tasks",
            "bfi",
            "--limit",
            str(n),
            "--mode",
            "logprob",
            "--model",
            model,
            "--model-args",
            f"base_url={base},model=m",
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


def test_psym_eval_logprob_mode_through_both_backends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``psym eval --mode logprob`` end to end (the real server, ``transformers serve``, offers
    no logprobs: see test_backend_transformers_serve.py): the answer is the option with the
    highest log-probability, a ``--resume`` re-run sends no request, completions send one echo
    request per option."""
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    n = 4
    with LatencyServer(latency=0.0) as srv:
        run = _cli_eval(tmp_path / "chat", "openai-chat", srv.base_url, n)
        assert srv.requests == n
        again = _cli_eval(tmp_path / "chat", "openai-chat", srv.base_url, n, "--resume")
        assert srv.requests == n  # served from the response cache
        comp = _cli_eval(tmp_path / "comp", "openai-completions", srv.base_url, 2)
        assert srv.requests == n + 5 * 2
    assert run["results"]["usage"]["requests"] == n and run["results"]["usage"]["prompt_tokens"]
    for s in run["samples"]:
        lps = s["option_logprobs"]
        assert len(lps) == 5 and max(lps.values()) <= 0.0
        best = max(lps, key=lambda k: lps[k])
        assert s["answer"] == int(best) and s["parse_status"] == "ok"
    assert again["results"]["cache"] == {**again["results"]["cache"], "hits": n, "misses": 0}
    assert again["results"]["usage"]["requests"] == 0
    assert [s["answer"] for s in again["samples"]] == [s["answer"] for s in run["samples"]]
    assert comp["results"]["usage"]["requests"] == 5 * 2  # one echo request per option
    for s in comp["samples"]:
        lps = s["option_logprobs"]
        assert len(lps) == 5 and all(v < 0 for v in lps.values())
        assert len(set(lps.values())) > 1  # the server's prompt logprobs, not a constant
