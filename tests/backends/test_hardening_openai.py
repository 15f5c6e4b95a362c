"""Issue 14: the OpenAI-compatible backends against a hostile loopback server.

Malformed 200 replies, a 401 body echoing the key, credentials in base_url, Retry-After as an
HTTP date, unusable URLs, a hung server, a huge body, and responses finished after a fatal error.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hostile_server import HostileServer, Reply, chat_ok  # noqa: E402

from psymetrics_core.backends.base import GenerationSettings  # noqa: E402
from psymetrics_core.backends.http_util import _retry_after  # noqa: E402
from psymetrics_core.backends.openai_chat import OpenAIChatBackend  # noqa: E402
from psymetrics_core.backends.openai_completions import OpenAICompletionsBackend  # noqa: E402
from psymetrics_core.base.errors import BackendError  # noqa: E402
from psymetrics_core.base.types import Option, Prompt  # noqa: E402
from psymetrics_core.cli import main  # noqa: E402

OPTS = tuple(Option(v, f"label {v}") for v in range(1, 6))
KEY = "sk-test-9f8e7d6c5b4a39281706"


def _prompts(n: int) -> list[Prompt]:
    return [
        Prompt(messages=({"role": "user", "content": f"statement {i}"},), options=OPTS, text="")
        for i in range(n)
    ]


def _chat(url: str, **extra: str) -> OpenAIChatBackend:
    return OpenAIChatBackend({"base_url": url, "model": "m", "backoff": "0.01", **extra})


MALFORMED = [
    {"choices": [None]},
    {"choices": {"0": {"message": {"content": "3"}}}},
    {"choices": [{"message": "3"}]},
    {"choices": [{"message": {"content": ["3"]}}]},
    {"choices": "3"},
]


@pytest.mark.parametrize("body", MALFORMED, ids=[json.dumps(b)[:40] for b in MALFORMED])
def test_malformed_200_is_one_line_error(body: dict[str, Any]) -> None:
    with HostileServer(lambda n, r: Reply(200, body)) as srv:
        with pytest.raises(BackendError, match="malformed response|no choices") as info:
            _chat(srv.base_url).generate(_prompts(1), GenerationSettings())
    assert "\n" not in str(info.value)


def test_usage_as_string_is_ignored_not_a_crash() -> None:
    body = {**chat_ok("4"), "usage": "lots"}
    with HostileServer(lambda n, r: Reply(200, body)) as srv:
        be = _chat(srv.base_url)
        out = be.generate(_prompts(2), GenerationSettings())
    assert [c.text for c in out] == ["4", "4"]
    assert be.usage()["requests"] == 2 and be.usage()["prompt_tokens"] == 0


def test_logprob_entries_without_logprob_are_a_clear_error() -> None:
    body = {
        "choices": [
            {
                "message": {"content": "3"},
                "logprobs": {"content": [{"token": "3", "top_logprobs": [{"token": "3"}]}]},
            }
        ]
    }
    with HostileServer(lambda n, r: Reply(200, body)) as srv:
        with pytest.raises(BackendError, match="numeric 'logprob'"):
            _chat(srv.base_url).option_logprobs(_prompts(1), GenerationSettings(mode="logprob"))


def test_completions_text_not_a_string() -> None:
    with HostileServer(lambda n, r: Reply(200, {"choices": [{"text": {"a": 1}}]})) as srv:
        be = OpenAICompletionsBackend({"base_url": srv.base_url, "model": "m"})
        with pytest.raises(BackendError, match="'text' should be a string"):
            be.generate(_prompts(1), GenerationSettings())


def _echo_401(n: int, request: dict[str, Any]) -> Reply:
    auth = request["headers"].get("Authorization", "")
    blob = base64.b64encode(auth.split(" ", 1)[-1].encode()).decode()
    msg = f"invalid key in header Authorization: {auth} (base64 {blob})"
    return Reply(401, {"error": {"message": msg}})


def test_401_echo_never_shows_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PSYM_TEST_KEY", KEY)
    with HostileServer(_echo_401) as srv:
        with pytest.raises(BackendError) as info:
            _chat(srv.base_url, api_key_env="PSYM_TEST_KEY").generate(
                _prompts(1), GenerationSettings()
            )
        assert srv.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"  # it was sent
    text = str(info.value)
    assert "HTTP 401" in text and "***" in text
    assert KEY not in text and base64.b64encode(KEY.encode()).decode() not in text


def _grep_tree(root: Path, needles: list[str]) -> list[str]:
    hits = []
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            hits += [f"{p}: {n}" for n in needles if n.encode() in data]
    return hits


@pytest.mark.parametrize("debug", ["0", "1"])
def test_401_echo_and_url_credentials_cli_prints_and_stores_no_key(
    tmp_path: Path, debug: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """The whole CLI: stdout, stderr, the run directory and the cache hold no key. With
    PSYM_DEBUG=1 the real console script (the traceback Python prints on the way out); with
    PSYM_DEBUG=0 ``cli.main`` in this process, which prints the one-line error the console
    script prints."""
    needles = [KEY, base64.b64encode(KEY.encode()).decode(), "urlsecret123", "qsecret456"]
    env = {"PSYM_TEST_KEY": KEY, "PSYM_DEBUG": debug, "PSYM_CACHE_DIR": str(tmp_path / "cache")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    def run(url: str, out: str, key: str = ",api_key_env=PSYM_TEST_KEY") -> Any:
        args = f"base_url={url},model=m,backoff=0.01{key}"
        argv = ["eval", "--tasks", "bfi", "--limit", "2", "--model", "openai-chat"]
        argv += ["--model-args", args, "--output", str(tmp_path / out)]
        if debug == "1":
            return subprocess.run(
                [sys.executable, "-m", "psymetrics_core", *argv],
                env={**os.environ},
                capture_output=True,
                text=True,
                timeout=120,
            )
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        printed = capsys.readouterr()
        return subprocess.CompletedProcess(argv, code, printed.out, printed.err)

    with HostileServer(_echo_401) as srv:
        r = run(srv.base_url, "r401")
    assert r.returncode != 0 and "HTTP 401" in r.stderr
    leaks = [n for n in needles if n in r.stdout + r.stderr]
    assert not leaks, leaks
    with HostileServer(lambda n, req: Reply(200, chat_ok("3"))) as srv:
        url = srv.base_url.replace("http://", "http://alice:urlsecret123@") + "?api_key=qsecret456"
        r = run(url, "rurl", key="")
        assert "qsecret456" in srv.requests[0]["path"]  # the credentials were used
        assert srv.requests[0]["headers"]["Authorization"].startswith("Basic ")
    assert r.returncode == 0, r.stderr
    assert "urlsecret123" not in r.stdout + r.stderr
    results = json.loads((tmp_path / "rurl" / "results.json").read_text())
    assert "***" in results["model_args"]["base_url"]
    assert not _grep_tree(tmp_path, needles)


def test_retry_after_http_date_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    wait = _retry_after({"Retry-After": format_datetime(when, usegmt=True)})
    assert wait is not None and 27 <= wait <= 31
    assert _retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # past
    assert _retry_after({"Retry-After": "soon"}) is None
    assert _retry_after({"Retry-After": "2"}) == 2.0

    # the backend's wait is recorded, not slept: what is checked is the wait it chose
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def recorded(delay: float, *args: Any) -> Any:
        waits.append(delay)
        return await real_sleep(0, *args)

    monkeypatch.setattr(asyncio, "sleep", recorded)
    date = format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)
    replies = [Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": date})]
    with HostileServer(lambda n, r: replies[n] if n < len(replies) else Reply(200, chat_ok())) as s:
        _chat(s.base_url).generate(_prompts(1), GenerationSettings())
        assert len(s.requests) == 2
    # the date, 1-2 s ahead at whole-second precision (backoff alone would wait 0.01 s)
    assert len(waits) == 1 and 0.9 <= waits[0] <= 2.0, waits


@pytest.mark.parametrize(
    "url, message",
    [
        ("ftp://127.0.0.1/v1", "must start with http"),
        ("127.0.0.1:8000/v1", "must start with http"),
        ("http:///v1", "names no host"),
        ("http://127.0.0.1:99999/v1", "not a valid URL"),
        ("http://exa mple.com/v1", "whitespace"),
    ],
)
def test_malformed_url_fails_at_once(url: str, message: str) -> None:
    t0 = time.monotonic()
    with pytest.raises(BackendError, match=message):
        _chat(url).generate(_prompts(1), GenerationSettings())
    assert time.monotonic() - t0 < 5


def test_unreachable_server_fails_at_once_without_retries() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    be = OpenAIChatBackend({"base_url": f"http://127.0.0.1:{port}/v1", "model": "m"})
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="cannot connect"):
        be.generate(_prompts(1), GenerationSettings())
    assert time.monotonic() - t0 < 5 and be.usage()["retries"] == 0


def test_overall_deadline_bounds_a_hung_server() -> None:
    with HostileServer(lambda n, r: Reply(200, chat_ok(), delay=3.0)) as srv:
        be = _chat(srv.base_url, timeout="1", deadline="1.5", max_retries="10")
        t0 = time.monotonic()
        with pytest.raises(BackendError, match="gave up after .* deadline"):
            be.generate(_prompts(1), GenerationSettings())
        elapsed = time.monotonic() - t0
    assert elapsed < 4  # 10 retries of 1 s would take 11 s or more
    assert len(srv.requests) == 2


def test_response_size_cap() -> None:
    big = b"x" * (1 << 16)
    with HostileServer(lambda n, r: Reply(200, big, chunks=64)) as srv:  # 4 MB, no length
        with pytest.raises(BackendError, match="over 1,048,576 bytes"):
            _chat(srv.base_url, max_response_bytes=str(1 << 20)).generate(
                _prompts(1), GenerationSettings()
            )
    with HostileServer(lambda n, r: Reply(200, b"y" * (2 << 20))) as srv:  # with a length
        with pytest.raises(BackendError, match="max_response_bytes"):
            _chat(srv.base_url, max_response_bytes=str(1 << 20)).generate(
                _prompts(1), GenerationSettings()
            )


@pytest.mark.parametrize(
    "arg", ["timeout=-1", "timeout=0", "timeout=nan", "deadline=inf", "backoff=-2", "concurrency=0"]
)
def test_bad_numeric_model_args(arg: str) -> None:
    key, value = arg.split("=")
    with pytest.raises(BackendError, match=f"--model-args {key} must be"):
        _chat("http://127.0.0.1:1/v1", **{key: value})


def test_responses_finished_after_a_fatal_error_are_kept() -> None:
    """One request fails with 400 while 7 others are in flight: all 7 reach on_result."""

    def script(n: int, request: dict[str, Any]) -> Reply:
        if request["body"]["messages"][0]["content"] == "statement 0":
            return Reply(400, {"error": {"message": "bad request"}}, delay=0.2)
        return Reply(200, chat_ok(), delay=0.6)

    kept: list[int] = []
    with HostileServer(script) as srv:
        be = _chat(srv.base_url, concurrency="8")
        with pytest.raises(BackendError, match="HTTP 400"):
            be.generate(_prompts(20), GenerationSettings(), on_result=lambda i, c: kept.append(i))
        started = len(srv.requests)
    assert started == 8  # nothing new is started after the fatal error ...
    assert sorted(kept) == list(range(1, 8))  # ... and every request in flight is kept
