"""A newcomer finds the backends' --model-args, and a wrong --model name says what to type
(issue 26, item 4); ``openai-chat`` reads OPENAI_API_KEY for OpenAI's own API, and a refused key
names the variable psym read."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.backends.openai_chat import OpenAIChatBackend
from psymetrics_core.base.errors import BackendError
from psymetrics_core.cli import cli
from psymetrics_core.pluginsys.session import Session, unknown_backend

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.latency_server import LatencyServer  # noqa: E402


def test_backends_listing_names_every_model_arg() -> None:
    res = CliRunner().invoke(cli, ["plugins", "--backends", "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["backend"]: r for r in json.loads(res.output)}
    chat = rows["openai-chat"]["model_args"]
    for key in ("base_url", "model", "api_key_env", "concurrency", "timeout", "max_retries"):
        assert key in chat, key
    assert "pretrained" in rows["hf"]["model_args"]
    assert "device" in rows["smollm2"]["model_args"]
    # every key the backend's own parser accepts is listed (its error names the known keys)
    with pytest.raises(BackendError) as err:
        OpenAIChatBackend({"base_url": "http://127.0.0.1:9/v1", "model": "m", "bogus": "1"})
    known = str(err.value).split("known: ")[1].rstrip(")").split(", ")
    assert set(known) <= set(chat), set(known) - set(chat)


@pytest.mark.parametrize(
    ("model", "expect"),
    [
        ("openai-caht", "did you mean 'openai-chat'?"),
        ("hff", "did you mean 'hf'?"),
        ("gpt-4o", "--model openai-chat --model-args base_url=URL,model=gpt-4o"),
        ("llama3.1", "--model openai-chat --model-args base_url=URL,model=llama3.1"),
    ],
)
def test_unknown_backend_suggests(model: str, expect: str) -> None:
    message = unknown_backend(model, Session().backends())
    assert expect in message and "psym plugins --backends" in message
    assert "\n" not in message


def test_openai_key_read_by_default_for_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    b = OpenAIChatBackend({"base_url": "https://api.openai.com/v1", "model": "gpt-4o"})
    assert b.api_key_env == "OPENAI_API_KEY"
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        b._headers()
    local = OpenAIChatBackend({"base_url": "http://127.0.0.1:8000/v1", "model": "m"})
    assert local.api_key_env is None


@pytest.mark.parametrize("key_env", [None, "MY_KEY"])
def test_401_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key_env) -> None:
    monkeypatch.setenv("MY_KEY", "sk-wrong-but-sent")
    with LatencyServer(latency=0.0, api_key="sk-right") as srv:
        extra = f",api_key_env={key_env}" if key_env else ""
        args = [
            "eval",
            "--tasks",
            "bfi",
            "--limit",
            "1",
            "--model",
            "openai-chat",
            "--model-args",
            f"base_url={srv.base_url},model=m{extra}",
            "-o",
            str(tmp_path / "run"),
        ]
        res = CliRunner().invoke(cli, args)
    assert res.exit_code != 0
    said = res.output + str(res.exception)  # the PsymError that psym prints as one line
    assert "HTTP 401" in said
    if key_env:
        assert "sent the key from the environment variable MY_KEY" in said
        assert "sk-wrong-but-sent" not in said
    else:
        assert "psym sent no key" in said and "api_key_env=VAR" in said


def test_default_label_is_the_served_model_and_typos_are_named(tmp_path: Path) -> None:
    """Found by a newcomer trial: two API models in one report were both "openai-chat", and a
    mistyped key (`modle=`) was reported as a missing `model`."""
    with LatencyServer(latency=0.0) as srv:
        for name in ("qwen-7b", "llama-8b"):
            args = [
                "eval",
                "--tasks",
                "bfi",
                "--limit",
                "2",
                "--model",
                "openai-chat",
                "--model-args",
                f"base_url={srv.base_url},model={name}",
                "-o",
                str(tmp_path / name),
            ]
            assert CliRunner().invoke(cli, args).exit_code == 0
        labels = [
            json.loads((tmp_path / n / "results.json").read_text())["label"]
            for n in ("qwen-7b", "llama-8b")
        ]
        assert labels == ["qwen-7b", "llama-8b"]
    with pytest.raises(BackendError, match="unknown --model-args for openai-chat: modle"):
        OpenAIChatBackend({"base_url": "http://127.0.0.1:9/v1", "modle": "x"})
