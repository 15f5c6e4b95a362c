"""One request stream per run (scheduler.py): a grid of small cells keeps --concurrency requests
in flight across cells, and gives the samples and scores of the cell-by-cell run, in order."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks/
from benchmarks.latency_server import LatencyServer  # noqa: E402
from psymetrics_core.runner import evaluate  # noqa: E402

GRID: dict[str, Any] = dict(  # noqa: C408
    limit=4,
    conditions=["original", "reversed-options"],
    repeats=2,
    temperature=0.7,
    concurrency=12,
)


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]


def test_grid_is_one_stream_with_the_sequential_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LatencyServer(latency=0.2) as srv:
        args = f"base_url={srv.base_url},model=stub"
        monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "c1"))
        seq = evaluate(["bfi", "mfq"], model="openai-chat", model_args=args, cache=False,
                       output=tmp_path / "seq", **GRID)  # fmt: skip
        seq_peak = srv.peak
        srv.peak = 0
        stream = evaluate(["bfi", "mfq"], model="openai-chat", model_args=args,
                          output=tmp_path / "stream", **GRID)  # fmt: skip
        stream_peak = srv.peak
    # cell by cell, at most one cell's 4 items are in flight; as one stream, all 12 slots fill
    assert seq_peak <= 4
    assert stream_peak == 12
    assert stream["cache"]["misses"] == 2 * 2 * 2 * 4  # every prompt asked once
    assert stream["cache"]["hits"] == 0  # the cells' re-reads of the stream are not hits
    assert stream["tasks"] == seq["tasks"]
    assert _lines(tmp_path / "stream") == _lines(tmp_path / "seq")
