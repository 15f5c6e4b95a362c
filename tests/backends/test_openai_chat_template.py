"""``openai-completions`` scores whole assistant replies (``Option.turn_end``) once it has the
model's chat template (``--model-args chat_template=PATH``), from the prompt log-probabilities
a server returns in either form: llama-cpp-python's echo or vLLM's ``prompt_logprobs``.

The servers are loopback stand-ins (tests/prompt_logprob_server.py: each reply shaped as the
named server's source writes it, the log-probabilities from a fixed per-token rule), so every
expected number is the rule summed over the reply's tokens. No real vLLM ran (no GPU here);
llama-cpp-python's real server: test_backend_llamacpp.py.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from prompt_logprob_server import CHATML, GENERATED, logprob, serve, tokenize

from psymetrics_core.backends.base import GenerationSettings, call_backend
from psymetrics_core.backends.cache import request_key
from psymetrics_core.backends.chat_template import load_chat_template
from psymetrics_core.backends.openai_chat import OpenAIChatBackend
from psymetrics_core.backends.openai_completions import OpenAICompletionsBackend
from psymetrics_core.backends.prompt_logprobs import ScoredSpan, score_span
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import Option, Prompt
from psymetrics_core.cli import cli

LOGPROB = GenerationSettings("logprob", 24, 0.0, 1234)
MSG = "How do I define my personal values?"
REPLIES = ("Write them down.", "I don't know, honestly!")
END = "<|im_end|>\n"


def _prompt(turn_end: bool = True) -> Prompt:
    opts = tuple(Option(i + 1, f"r{i}", r, turn_end=turn_end) for i, r in enumerate(REPLIES))
    return Prompt(({"role": "user", "content": MSG},), opts, MSG)


def _expected(reply: str) -> tuple[float, int]:
    pieces = tokenize(reply + END)
    return sum(logprob(p) for p in pieces), len(pieces)


@pytest.fixture
def template(tmp_path: Path) -> Path:
    path = tmp_path / "chatml.jinja"
    path.write_text(CHATML, encoding="utf-8")
    return path


def _backend(url: str, template: Path | None, **extra: str) -> OpenAICompletionsBackend:
    args = {"base_url": url, "model": "m", "backoff": "0.01", **extra}
    if template is not None:
        args["chat_template"] = str(template)
    return OpenAICompletionsBackend(args)


@pytest.mark.parametrize(
    "kind, ask, source",
    [
        ("llama-cpp-python", "false", "echo"),
        ("vllm", "false", "echo"),  # top-1 alternatives without token ids: the echo is read
        ("vllm", "true", "prompt_logprobs"),  # prompt_logprobs: 0, the prompt token alone
    ],
)
def test_a_reply_is_scored_with_its_end_of_turn(
    template: Path, kind: str, ask: str, source: str
) -> None:
    with serve(kind) as srv:
        be = _backend(srv["url"], template, prompt_logprobs=ask)
        assert be.supports_turn_end
        (c,) = call_backend(be, [_prompt()], LOGPROB)
    want = [_expected(r) for r in REPLIES]
    assert c.option_logprobs == pytest.approx([w[0] for w in want], abs=1e-12)
    assert c.meta["option_tokens"] == [w[1] for w in want]
    assert c.meta["logprob_source"] == source
    # what was sent: the ChatML rendering, the reply, its end of turn; echo, one token generated
    sent = srv["requests"][0]
    context = (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        f"Face<|im_end|>\n<|im_start|>user\n{MSG}<|im_end|>\n<|im_start|>assistant\n"
    )
    assert sorted(r["prompt"] for r in srv["requests"]) == sorted(
        context + r + END for r in REPLIES
    )
    assert sent["echo"] is True and sent["max_tokens"] == 1
    assert ("prompt_logprobs" in sent) is (ask == "true")


@pytest.mark.parametrize("kind", ["llama-cpp-python", "vllm"])
def test_the_generated_token_is_never_counted(template: Path, kind: str) -> None:
    # a turn ending in a special token (no newline): the generated token follows the special
    # token, which llama-cpp-python shows without text, so the walk alone cannot place it
    tmpl = template.parent / "no-newline.jinja"
    tmpl.write_text(CHATML.replace("'<|im_end|>' + '\\n'", "'<|im_end|>'"), encoding="utf-8")
    assert tmpl.read_text(encoding="utf-8") != CHATML
    with serve(kind) as srv:
        (c,) = call_backend(_backend(srv["url"], tmpl), [_prompt()], LOGPROB)
    pieces = tokenize(REPLIES[0] + "<|im_end|>")
    assert c.option_logprobs[0] == pytest.approx(sum(logprob(p) for p in pieces))
    assert logprob(GENERATED) != 0 and c.meta["option_tokens"][0] == len(pieces)


def test_the_template_is_in_the_identity_and_the_cache_key(template: Path, tmp_path: Path) -> None:
    be = _backend("http://127.0.0.1:9/v1", template)
    ident = be.identity()["chat_template"]
    assert ident["path"] == str(template) and ident["template"] == CHATML
    assert len(ident["sha256"]) == 64
    other = tmp_path / "other.jinja"
    other.write_text(CHATML.replace("SmolLM", "Smol"), encoding="utf-8")
    key = request_key(be.cache_identity(), _prompt(), LOGPROB)
    assert key != request_key(
        _backend("http://127.0.0.1:9/v1", other).cache_identity(), _prompt(), LOGPROB
    )
    moved = tmp_path / "moved.jinja"  # the same template elsewhere: the same responses
    moved.write_text(CHATML, encoding="utf-8")
    moved_be = _backend("http://127.0.0.1:9/v1", moved)
    assert request_key(moved_be.cache_identity(), _prompt(), LOGPROB) == key
    plain = _backend("http://127.0.0.1:9/v1", None)
    assert "chat_template" not in plain.identity() and not plain.supports_turn_end


def test_the_template_comes_from_a_gguf_header_or_a_tokenizer_config(tmp_path: Path) -> None:
    def gguf_string(s: str) -> bytes:
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    kv = [
        gguf_string("general.name") + struct.pack("<I", 8) + gguf_string("toy"),
        gguf_string("tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, 3)
        + b"".join(gguf_string(t) for t in ("<unk>", "<|im_start|>", "<|im_end|>")),
        gguf_string("tokenizer.ggml.bos_token_id") + struct.pack("<II", 4, 1),
        gguf_string("tokenizer.ggml.eos_token_id") + struct.pack("<II", 4, 2),
        gguf_string("tokenizer.chat_template") + struct.pack("<I", 8) + gguf_string(CHATML),
    ]
    gguf = tmp_path / "toy.gguf"
    gguf.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv)) + b"".join(kv))
    t = load_chat_template(str(gguf))
    assert (t.text, t.bos_token, t.eos_token) == (CHATML, "<|im_start|>", "<|im_end|>")
    folder = tmp_path / "tok"
    folder.mkdir()
    config = {"chat_template": CHATML, "eos_token": {"content": "<|im_end|>"}, "bos_token": None}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    t2 = load_chat_template(str(folder))
    assert (t2.text, t2.eos_token, t2.bos_token) == (CHATML, "<|im_end|>", "")
    assert t2.turn_end([{"role": "user", "content": "hi"}]) == END


def test_llama_servers_own_binary_fails_in_one_line(template: Path) -> None:
    """llama.cpp's llama-server returns log-probabilities of generated tokens only."""
    with serve("llama-server") as srv:
        with pytest.raises(BackendError) as err:
            call_backend(_backend(srv["url"], template), [_prompt()], LOGPROB)
    line = str(err.value)
    assert "\n" not in line and "no prompt log-probabilities" in line and "llama-server" in line


def _eval(tmp_path: Path, model: str, url: str, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "--tasks",
            "value-portrait",
            "--limit",
            "1",
            "--model",
            model,
            "--model-args",
            f"base_url={url},model=m,backoff=0.01" + "".join("," + a for a in args),
            "--output",
            str(tmp_path / "run"),
        ],
    )
    return res.exit_code, res.output + (str(res.exception) if res.exception else "")


def test_value_portrait_through_openai_completions_with_a_template(
    tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from psymetrics_plugin_value_portrait.data import scenarios

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    with serve("llama-cpp-python") as srv:
        code, out = _eval(tmp_path, "openai-completions", srv["url"], f"chat_template={template}")
    assert code == 0, out
    assert len(srv["requests"]) == 5  # one scenario, five replies
    (sample,) = [
        json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()
    ]
    first = scenarios()[0]
    for r in first.responses:
        total, n = _expected(r.text)
        assert sample["data"]["logprobs"][str(r.id)] == pytest.approx(total)
        assert sample["data"]["tokens"][str(r.id)] == n
    assert sample["data"]["logprob_source"] == "echo"
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["backend"]["chat_template"]["sha256"] == load_chat_template(str(template)).sha256
    assert '"logprob_source": "echo"' in json.dumps(results["tasks"])


@pytest.mark.parametrize("model", ["openai-chat", "openai-completions"])
def test_backends_that_cannot_score_a_reply_are_refused_before_any_request(
    tmp_path: Path, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    with serve("vllm") as srv:
        code, out = _eval(tmp_path, model, srv["url"])
    assert code == 1 and srv["requests"] == []
    line = out.splitlines()[-1]  # the BackendError psym prints as its one line
    assert "end-of-turn" in line and "Traceback" not in out, out
    if model == "openai-chat":
        assert "smollm2, hf" in line and "chat_template=PATH" in line
    else:
        assert line.startswith("backend 'openai-completions'")
        assert "without the model's chat template" in line and "chat_template=PATH" in line


def test_openai_chat_declares_no_turn_end() -> None:
    be = OpenAIChatBackend({"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    assert not be.supports_turn_end


def _span(text: str, start: int, tokens: list[str], values: list[float | None]) -> ScoredSpan:
    choice = {"logprobs": {"tokens": tokens, "token_logprobs": values}}
    return score_span({"choices": [choice]}, choice, text, start)


def test_token_texts_are_laid_along_the_text() -> None:
    # a leading space shown apart (SentencePiece), as vLLM's decoded tokens may show it
    assert _span("Hi there", 2, ["Hi", "there"], [None, -1.5]) == ScoredSpan(-1.5, 1, "echo")
    # a character split over two tokens, each shown as a replacement character
    got = _span("a\u2014b", 1, ["a", "\ufffd", "\ufffd", "b"], [None, -1.0, -2.0, -4.0])
    assert got == ScoredSpan(-7.0, 3, "echo")
    # a token crossing from the query into the reply cannot be split
    with pytest.raises(BackendError, match="spans the end of the query"):
        _span("ab\ncd", 3, ["ab", "\nc", "d"], [None, -1.0, -1.0])
    with pytest.raises(BackendError, match="no log-probability"):
        _span("ab\ncd", 3, ["ab\n", "cd"], [None, None])


def test_prompt_logprobs_with_token_ids_pick_the_prompt_token() -> None:
    """vLLM with ``return_token_ids``: an entry holding the prompt token and its top
    alternative is read by the id in ``prompt_token_ids``, not by its rank."""
    text, start = "ab\ncd", 3
    entries = [
        None,
        {"7": {"logprob": -0.5, "rank": 1, "decoded_token": "\n"}},
        {
            "3": {"logprob": -0.1, "rank": 1, "decoded_token": "x"},
            "8": {"logprob": -2.5, "rank": 4, "decoded_token": "cd"},
        },
    ]
    choice = {"prompt_logprobs": entries, "prompt_token_ids": [6, 7, 8]}
    body = {"choices": [choice], "usage": {"completion_tokens": 1}}
    assert score_span(body, choice, text, start) == ScoredSpan(-2.5, 1, "prompt_logprobs")
    choice["prompt_token_ids"] = None  # no ids: the entry is ambiguous, and there is no echo
    with pytest.raises(BackendError, match="no prompt log-probabilities"):
        score_span(body, choice, text, start)
