"""Fuzz cases of ``openai-completions``' client-side chat template (``--model-args
chat_template=PATH``) and of the prompt log-probabilities a server returns for a reply: every
malformed file or reply ends in one clear ``BackendError`` line naming the file, the argument
or the endpoint, before or instead of a wrong number."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from harness import expect_clean_error
from prompt_logprob_server import CHATML, serve

from psymetrics_core.backends.base import GenerationSettings, call_backend
from psymetrics_core.backends.openai_completions import OpenAICompletionsBackend
from psymetrics_core.base.types import Option, Prompt

MSG = "How do I define my personal values?"


def _s(text: str) -> bytes:
    b = text.encode()
    return struct.pack("<Q", len(b)) + b


def _gguf(*kv: bytes, version: int = 3, count: int | None = None) -> bytes:
    n = len(kv) if count is None else count
    return b"GGUF" + struct.pack("<IQQ", version, 0, n) + b"".join(kv)


TEMPLATE_KV = _s("tokenizer.chat_template") + struct.pack("<I", 8) + _s(CHATML)
FILES: list[tuple[str, str, bytes, str]] = [
    ("empty", "t.jinja", b"", "empty"),
    ("blank", "t.jinja", b"  \n\t", "empty"),
    ("syntax", "t.jinja", b"{% for m in messages %}{{ m['content'] }", "t.jinja"),
    ("unknown-tag", "t.jinja", b"{% frobnicate %}", "t.jinja"),
    ("raises", "t.jinja", b"{{ raise_exception('roles must alternate') }}", "alternate"),
    ("bad-index", "t.jinja", b"{{ messages[5]['content'] }}", "t.jinja"),
    ("not-utf8", "t.jinja", b"\xff\xfe{{ x }}\xc3", "UTF-8"),
    ("too-big", "t.jinja", b"{# " + b"x" * (1024 * 1024 + 10) + b" #}", "bytes"),
    ("gguf-not-gguf", "m.gguf", b"GGML" + b"\0" * 40, "not a GGUF"),
    ("gguf-version", "m.gguf", _gguf(TEMPLATE_KV, version=9), "version 9"),
    ("gguf-cut", "m.gguf", _gguf(TEMPLATE_KV)[:40], "cut short"),
    ("gguf-header-only", "m.gguf", b"GGUF", "cut short"),
    (
        "gguf-no-template",
        "m.gguf",
        _gguf(_s("general.name") + struct.pack("<I", 8) + _s("x")),
        "no tokenizer.chat_template",
    ),
    ("gguf-huge-string", "m.gguf", _gguf(struct.pack("<Q", 2**62) + b"abc"), "malformed GGUF"),
    (
        "gguf-bad-type",
        "m.gguf",
        _gguf(_s("k") + struct.pack("<I", 77) + b"\0" * 8),
        "value type 77",
    ),
    ("gguf-nested", "m.gguf", _gguf(_s("k") + struct.pack("<IIQ", 9, 9, 1)), "nested"),
    ("gguf-too-many-keys", "m.gguf", _gguf(count=2**40), "metadata keys"),
    (
        "gguf-template-not-string",
        "m.gguf",
        _gguf(_s("tokenizer.chat_template") + struct.pack("<II", 4, 7)),
        "no tokenizer.chat_template",
    ),
    ("config-not-json", "tokenizer_config.json", b"{chat_template: 1", "not JSON"),
    ("config-list", "tokenizer_config.json", b"[1, 2]", "no 'chat_template'"),
    ("config-no-template", "tokenizer_config.json", b'{"eos_token": "x"}', "no 'chat_template'"),
    (
        "config-template-number",
        "tokenizer_config.json",
        b'{"chat_template": 3}',
        "no 'chat_template'",
    ),
    (
        "config-named-no-default",
        "tokenizer_config.json",
        json.dumps({"chat_template": [{"name": "tool_use", "template": "x"}]}).encode(),
        "no 'chat_template'",
    ),
    (
        "config-syntax",
        "tokenizer_config.json",
        json.dumps({"chat_template": "{% if %}"}).encode(),
        "tokenizer_config.json",
    ),
]


@pytest.mark.parametrize("name, filename, data, expect", FILES, ids=[c[0] for c in FILES])
def test_fuzz_chat_template_files(
    tmp_path: Path, name: str, filename: str, data: bytes, expect: str
) -> None:
    path = tmp_path / filename
    path.write_bytes(data)
    args = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "chat_template": str(path)}

    def build_and_render() -> None:
        be = OpenAICompletionsBackend(args)
        prompt = Prompt(({"role": "user", "content": MSG},), (), MSG)
        be.context_text(prompt)

    out = expect_clean_error(build_and_render, [str(path), filename], label=name)
    assert expect in out.message, out.message


def test_fuzz_chat_template_missing_and_arguments(tmp_path: Path) -> None:
    base = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    cases = [
        ({"chat_template": str(tmp_path / "nope.jinja")}, "no such file"),
        ({"chat_template": str(tmp_path)}, "tokenizer_config.json"),  # a folder without one
        ({"prompt_logprobs": "maybe"}, "prompt_logprobs"),
        ({"chat_templat": "x"}, "unknown --model-args"),
    ]
    for extra, expect in cases:
        out = expect_clean_error(lambda e=extra: OpenAICompletionsBackend({**base, **e}), [expect])
        assert expect in out.message


def test_fuzz_template_that_drops_the_reply(tmp_path: Path) -> None:
    path = tmp_path / "drops.jinja"
    path.write_text("{% for m in messages %}{{ m['role'] }}{% endfor %}", encoding="utf-8")
    be = OpenAICompletionsBackend(
        {"base_url": "http://127.0.0.1:9/v1", "model": "m", "chat_template": str(path)}
    )
    opts = (Option(1, "r", "Write them down.", turn_end=True),)
    prompt = Prompt(({"role": "user", "content": MSG},), opts, MSG)
    settings = GenerationSettings("logprob", 24, 0.0, 1234)
    out = expect_clean_error(lambda: call_backend(be, [prompt], settings), [str(path)])
    assert "drops the reply" in out.message


def _reply(logprobs: object = None, **choice: object) -> bytes:
    body: dict[str, object] = {
        "choices": [{"text": "", "index": 0, "logprobs": logprobs, **choice}]
    }
    return json.dumps(body).encode()


def _echo(tokens: list[object], values: list[object]) -> bytes:
    return _reply({"tokens": tokens, "token_logprobs": values, "text_offset": [0] * len(tokens)})


REPLIES: list[tuple[str, bytes, str]] = [
    ("no-logprobs", _reply(None), "no prompt log-probabilities"),
    ("logprobs-list", _reply([1, 2]), "'logprobs' should be an object"),
    ("generated-only", _reply({"content": [{"token": "x", "logprob": -1}]}), "llama-server"),
    ("tokens-not-strings", _echo([1, 2], [None, -1.0]), "should hold strings"),
    ("lengths-differ", _echo(["a", "b"], [None]), "one length"),
    ("values-strings", _echo(["a", "b"], [None, "-1"]), "should hold numbers"),
    ("tokens-other-text", _echo(["Hello", " world"], [None, -1.0]), "spell the prompt"),
    ("prompt-logprobs-dict", _reply(None, prompt_logprobs={"a": 1}), "non-empty list"),
    ("prompt-logprobs-empty", _reply(None, prompt_logprobs=[]), "non-empty list"),
    ("prompt-logprobs-entry", _reply(None, prompt_logprobs=[None, 3]), "prompt_logprobs[1]"),
    (
        "prompt-logprobs-no-value",
        _reply(None, prompt_logprobs=[None, {"5": {"rank": 1}}]),
        "prompt_logprobs[1]",
    ),
    ("no-choices", b'{"choices": []}', "no choices"),
]


@pytest.mark.parametrize("name, raw, expect", REPLIES, ids=[c[0] for c in REPLIES])
def test_fuzz_reply_logprobs(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    path = tmp_path / "chatml.jinja"
    path.write_text(CHATML, encoding="utf-8")
    opts = (Option(1, "r", "Write them down.", turn_end=True),)
    prompt = Prompt(({"role": "user", "content": MSG},), opts, MSG)
    settings = GenerationSettings("logprob", 24, 0.0, 1234)
    with serve("vllm", raw=raw) as srv:
        args = {
            "base_url": srv["url"],
            "model": "m",
            "chat_template": str(path),
            "max_retries": "0",
        }
        be = OpenAICompletionsBackend(args)
        out = expect_clean_error(
            lambda: call_backend(be, [prompt], settings), ["/v1/completions"], label=name
        )
    assert expect in out.message, out.message
