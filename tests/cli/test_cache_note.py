"""A cached re-run says so on the screen, with counts (issue 31: a re-run answered from the
response cache looked like a fresh one). Runs against a real local OpenAI-compatible server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.cli import cli
from psymetrics_core.cli.cache_note import cache_note

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from benchmarks.latency_server import LatencyServer  # noqa: E402


def _eval(base_url: str, out: Path, *extra: str) -> str:
    args = ["eval", "--tasks", "bfi", "--limit", "3", "--model", "openai-chat"]
    args += ["--model-args", f"base_url={base_url},model=stub", "-o", str(out), *extra]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    return res.output


def test_a_cached_rerun_says_it_came_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "c"))
    with LatencyServer(latency=0.0) as srv:
        first = _eval(srv.base_url, tmp_path / "a")
        second = _eval(srv.base_url, tmp_path / "b")
        more = _eval(srv.base_url, tmp_path / "c2", "--limit", "5")
        fresh = _eval(srv.base_url, tmp_path / "d", "--no-cache")
        assert srv.requests == 3 + 2 + 3  # the re-run asked nothing, the longer one 2 more
    assert "from the cache" not in first
    assert "(from the cache) 3 of 3 responses came from the response cache, none from" in second
    assert "(from the cache) 3 of 5 responses came from the response cache, 2 from" in more
    assert "from the cache" not in fresh


def test_no_note_without_hits() -> None:
    assert cache_note({"cache": None}) is None
    assert cache_note({"cache": {"path": "x", "hits": 0, "misses": 4}}) is None
    assert "1,200 of 1,201" in str(cache_note({"cache": {"hits": 1200, "misses": 1}}))
