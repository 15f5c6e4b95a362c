"""The OpenAI backends against a real server: ``transformers serve`` on the SmolLM2 copy.

The server is the one ``transformers[serving]`` installs (wheels only, nothing compiled); it
serves the dequantised safetensors copy of the default model that psymetrics keeps in its cache
directory, offline (``HF_HUB_OFFLINE=1``), on a free loopback port.

What this server supports is covered here: ``psym eval`` in generate mode through
``openai-chat`` and ``openai-completions``, the token usage it reports, and a re-run with
``--resume`` that the response cache serves without a request reaching the server. It ignores
``logprobs``/``top_logprobs``/``echo`` (transformers 5.x lists them as unsupported fields), so
here logprob mode is checked only to fail with one clear line naming the way out. Option scoring
from a server's chat ``top_logprobs`` and from echoed prompt logprobs (the answer is the option
with the highest log-probability, one echo request per option, a re-run from the cache) is
covered in test_backend_openai.py against the loopback API stand-in
(benchmarks/latency_server.py); no real server that installs as a wheel offers it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from model_server import free_port, running
from psymetrics_plugin_hf.local_model import converted_copy, smollm2_location

from psymetrics_core.base.errors import BackendError
from psymetrics_core.cli import cli

pytestmark = [
    pytest.mark.integration,  # a real third-party server
    pytest.mark.model,
    pytest.mark.skipif(
        any(importlib.util.find_spec(m) is None for m in ("fastapi", "uvicorn")),
        reason="transformers[serving] is not installed (make setup installs it)",
    ),
]
N = 3
MAX_NEW = 8
START_DEADLINE_S = 180


def _smollm2_copy(smollm2) -> Path:
    """The dequantised safetensors copy of the bundled SmolLM2 GGUF, made on first use."""
    folder, name = smollm2_location()
    copy = converted_copy(str(folder), name)
    if not (copy / "config.json").is_file():
        smollm2._load()  # the hf backend converts the GGUF file and keeps the copy
    assert (copy / "config.json").is_file(), f"no converted copy at {copy}"
    return copy


class Served:
    """A running ``transformers serve``: its base URL, model name and access log."""

    def __init__(self, base: str, model: str, log: Path) -> None:
        self.base, self.model, self.log = base, model, log

    def posts(self, route: str) -> int:
        """Requests the server has logged for ``route`` so far."""
        return self.log.read_text(errors="replace").count(f'"POST /v1/{route} HTTP')


@pytest.fixture(scope="module")
def served(smollm2, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``transformers serve`` pinned to the SmolLM2 copy; stopped after the module."""
    model = str(_smollm2_copy(smollm2))
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "server.log"
    # one torch thread: two threads on a busy 2-core machine make each request 10x slower
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "transformers.cli.transformers",
        "serve",
        model,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
        "--log-level",
        "info",
        "--default-seed",
        "0",
    ]
    root = f"http://127.0.0.1:{port}"
    # uvicorn waits for open keep-alive connections: 10 s, then it is killed
    with running(
        cmd, f"{root}/health", log, env=env, deadline_s=START_DEADLINE_S, stop_timeout_s=10
    ):
        yield Served(f"{root}/v1", model, log)


def _invoke(tmp: Path, srv: Served, model: str, mode: str, n: int, *extra: str):
    return CliRunner().invoke(
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
            f"base_url={srv.base},model={srv.model}",
            "--output",
            str(tmp / f"{model}-{mode}"),
            "--concurrency",
            "2",
            "--max-new-tokens",
            str(MAX_NEW),
            *extra,
        ],
    )


def _eval(tmp: Path, srv: Served, model: str, n: int, *extra: str) -> dict:
    res = _invoke(tmp, srv, model, "generate", n, *extra)
    assert res.exit_code == 0, res.output
    out = tmp / f"{model}-generate"
    results = json.loads((out / "results.json").read_text())
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == n
    return {"results": results, "samples": samples}


def test_psym_eval_bfi_through_transformers_serve_chat(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    before = served.posts("chat/completions")
    run = _eval(tmp_path, served, "openai-chat", N)
    assert served.posts("chat/completions") - before == N
    usage = run["results"]["usage"]
    assert usage["requests"] == N and usage["retries"] == 0
    assert usage["prompt_tokens"] > 20 * N  # the chat template and the item text
    assert 0 < usage["completion_tokens"] <= MAX_NEW * N
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    for s in run["samples"]:
        assert isinstance(s["completion"], str) and s["completion"]
        assert s["answer"] is None or 1 <= s["answer"] <= 5
    # the same command again (--resume: the run directory exists) is served from the cache: no
    # request reaches the server
    again = _eval(tmp_path, served, "openai-chat", N, "--resume")
    assert served.posts("chat/completions") - before == N
    assert again["results"]["cache"] == {**again["results"]["cache"], "hits": N, "misses": 0}
    assert again["results"]["usage"]["requests"] == 0
    assert [s["completion"] for s in again["samples"]] == [s["completion"] for s in run["samples"]]
    assert [s["answer"] for s in again["samples"]] == [s["answer"] for s in run["samples"]]


def test_psym_eval_bfi_through_transformers_serve_completions(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    before = served.posts("completions")
    run = _eval(tmp_path, served, "openai-completions", 2)
    assert served.posts("completions") - before == 2
    usage = run["results"]["usage"]
    assert usage["requests"] == 2 and usage["prompt_tokens"] > 20 * 2
    assert 0 < usage["completion_tokens"] <= MAX_NEW * 2
    assert all(isinstance(s["completion"], str) for s in run["samples"])


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("openai-chat", "returned no top_logprobs: the server does not offer logprobs"),
        ("openai-completions", "returned no prompt logprobs for echo=true"),
    ],
)
def test_logprob_mode_without_server_logprobs_is_one_clear_line(
    served: Served, model: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """transformers serve ignores logprobs: psym says so in one line, no traceback."""
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    res = _invoke(tmp_path, served, model, "logprob", 1)
    assert res.exit_code != 0
    # a BackendError (a PsymError): the console entry point prints its one line
    assert isinstance(res.exception, BackendError), res.output
    text = str(res.exception)
    assert message in text and "--mode generate" in text and "\n" not in text
