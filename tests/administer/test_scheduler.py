"""One request stream per run (scheduler.py): a grid of small cells keeps --concurrency requests
in flight across cells, and gives the samples and scores of the cell-by-cell run, in order."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from benchmarks.latency_server import LatencyServer  # noqa: E402
from psymetrics_core import evaluate  # noqa: E402

GRID: dict[str, Any] = dict(  # noqa: C408
    limit=4,
    conditions=["original", "reversed-options"],
    repeats=2,
    temperature=0.7,
    concurrency=12,
)


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def sequential(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[Any]]:
    """The grid one request at a time (concurrency 1: the cell-by-cell order), no cache; the
    server's answers depend only on the request, so its latency does not matter. One run,
    the reference of both streams (with and without the cache)."""
    tmp_path = tmp_path_factory.mktemp("sequential")
    with LatencyServer(latency=0.005) as srv:
        args = f"base_url={srv.base_url},model=stub"
        res = evaluate(
            ["bfi", "mfq"],
            model="openai-chat",
            model_args=args,
            cache=False,
            output=tmp_path / "seq",
            **{**GRID, "concurrency": 1},
        )
        assert srv.peak == 1
    return res, _lines(tmp_path / "seq")


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_grid_is_one_stream_with_the_sequential_results(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cache: bool,
    sequential: tuple[dict[str, Any], list[Any]],
) -> None:
    """With the response cache and with --no-cache alike (the stream does not depend on the
    cache): requests of different cells and seeds are in flight together."""
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "c"))
    seq, seq_lines = sequential
    with LatencyServer(latency=0.2) as srv:
        args = f"base_url={srv.base_url},model=stub"
        stream = evaluate(
            ["bfi", "mfq"],
            model="openai-chat",
            model_args=args,
            cache=cache,
            output=tmp_path / "stream",
            **GRID,
        )
        peak, overlaps, sent = srv.peak, srv.seed_overlaps, srv.requests
    # cell by cell, at most one cell's 4 items would be in flight; as one stream, all 12 slots
    # fill with requests of several cells
    assert peak == 12
    # the repeats' seeds share the pool: requests of repeat 2 start while repeat 1's are in
    # flight (a stream per seed would drain between them: 0 overlaps, like the cell-by-cell run)
    assert overlaps > 0
    assert sent == 2 * 2 * 2 * 4  # every prompt asked once
    if cache:
        assert stream["cache"]["misses"] == 2 * 2 * 2 * 4
        assert stream["cache"]["hits"] == 0  # the cells' re-reads of the stream are not hits
    else:  # --no-cache: the responses stay in memory, nothing is written to the cache
        assert stream["cache"] is None
        assert not (tmp_path / "c" / "responses.sqlite3").exists()
    assert stream["tasks"] == seq["tasks"]
    assert _lines(tmp_path / "stream") == seq_lines


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_a_failing_stream_fails_the_run_with_its_error_and_does_not_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: bool
) -> None:
    from psymetrics_core.base.errors import BackendError

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("BENCH_KEY", "wrong")
    with LatencyServer(latency=0.01, api_key="right") as srv:
        args = f"base_url={srv.base_url},model=stub,api_key_env=BENCH_KEY"
        with pytest.raises(BackendError, match="401"):
            evaluate(["bfi", "mfq"], model="openai-chat", model_args=args, cache=cache, **GRID)
        sent = srv.requests
    # the stream stopped at the error; the cells asked again only what the stream left
    assert 0 < sent <= 2 * 2 * 2 * 4 + 12


def test_a_cell_failing_stops_the_stream_and_keeps_what_was_paid_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin error in the first cell ends the run; the stream starts no new request and
    every response that did arrive is in the cache (a re-run does not pay for it again)."""
    from psymetrics_core.administer.kinds.questionnaire import QuestionnaireKind
    from psymetrics_core.backends.cache import ResponseCache

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "c"))

    def failing(self: Any, run: Any) -> Any:  # the stream has listed the cells' requests
        raise RuntimeError("boom in a cell")

    monkeypatch.setattr(QuestionnaireKind, "run_cell", failing)
    with LatencyServer(latency=0.3) as srv:
        args = f"base_url={srv.base_url},model=stub"
        with pytest.raises(RuntimeError, match="boom"):
            evaluate(
                ["bfi"],
                model="openai-chat",
                model_args=args,
                limit=30,
                repeats=2,
                temperature=0.7,
                concurrency=4,
            )
        sent = srv.requests
    assert sent < 60  # stopped early: not every prompt of the plan was asked
    assert len(ResponseCache().rows()) == sent  # every answer that arrived was stored


def test_without_a_cache_a_response_is_held_until_every_listed_request_read_it() -> None:
    """The stream's memory (--no-cache): a request listed by two cells is asked once, handed to
    both, then dropped (memory bounded by what the cells have not read yet)."""
    from psymetrics_core.administer.scheduler import Stream
    from psymetrics_core.base.types import Completion

    stream = Stream(covered=set(), claimed={"a", "b"})
    stream._wanted.update({"a": 2, "b": 1})
    stream._keep([("a", "generate", Completion(text="1")), ("b", "generate", Completion(text="2"))])
    stream._mark(["a", "b"])
    assert {k: c.text for k, c in stream.take(["a", "b"]).items()} == {"a": "1", "b": "2"}
    assert set(stream._held) == {"a"}  # "b" read by its one cell; "a" waits for its second
    assert stream.take(["a"])["a"].text == "1"
    assert stream._held == {}
    assert stream.take(["a"]) == {}  # read again: not held any more, the cell asks the model
