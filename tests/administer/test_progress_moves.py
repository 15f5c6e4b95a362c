"""Progress moves while a task is answered (issue 31, item 8): the run's request stream
advances each task's reporter as responses arrive, not once when the whole task is done, and
counts every prompt exactly once (with and without the response cache)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from psymetrics_core import evaluate
from psymetrics_core.backends.base import Backend, GenerationSettings, OnResult, Reporter
from psymetrics_core.base.types import Completion, Prompt

N_ITEMS = 6


class _Bar:
    """A reporter that records every advance and lets a backend wait for the bar to reach n."""

    def __init__(self, task: str, total: int) -> None:
        self.task, self.total = task, total
        self.done = 0
        self.calls: list[int] = []
        self._cond = threading.Condition()

    def advance(self, n: int = 1) -> None:
        with self._cond:
            self.done += n
            self.calls.append(n)
            self._cond.notify_all()

    def reaches(self, n: int, timeout: float = 5.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.done >= n, timeout)


class _OneByOne(Backend):
    """A fake backend (unit test only): answers "3" prompt by prompt, handing each to
    ``on_result``, and after each asks whether the task's bar already shows it."""

    name = "one-by-one"
    accepts_on_result = True
    chunk_size = 64

    def __init__(self) -> None:
        self.bars: list[_Bar] = []
        self.seen_moving: list[bool] = []

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
        on_result: OnResult | None = None,
    ) -> list[Completion]:
        out = []
        for i, _ in enumerate(prompts):
            out.append(Completion(text="3"))
            if on_result is not None:
                on_result(i, out[-1])
            if progress is not None:
                progress.advance(1)
            # the bar must show this answer before the next prompt is answered
            self.seen_moving.append(self.bars[-1].reaches(i + 1))
        return out

    def identity(self) -> dict[str, Any]:
        return {"backend": self.name, "model": "one-by-one"}


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_the_bar_moves_item_by_item_and_counts_each_prompt_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: bool
) -> None:
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "c"))
    be = _OneByOne()

    def progress(task: str, total: int) -> _Bar:
        be.bars.append(_Bar(task, total))
        return be.bars[-1]

    res = evaluate(
        ["bfi"], backend=be, limit=N_ITEMS, cache=cache, output=tmp_path / "run", progress=progress
    )
    (bar,) = be.bars
    assert res["tasks"]["bfi"]["n_answered"] == N_ITEMS
    # before the fix the bar stood at 0 until the task's cell read all 6 answers at once
    assert be.seen_moving == [True] * N_ITEMS
    assert len(bar.calls) >= N_ITEMS // 2  # many updates, not one jump
    assert bar.done == bar.total == N_ITEMS  # every prompt once: never 12/6


def test_a_second_run_from_the_cache_fills_the_bar_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Responses already cached are not streamed: the cell's read advances the bar for them."""
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "c"))
    be = _OneByOne()
    bars: list[_Bar] = []

    def progress(task: str, total: int) -> _Bar:
        bars.append(_Bar(task, total))
        be.bars.append(bars[-1])
        return bars[-1]

    for name in ("first", "second"):
        evaluate(
            ["bfi"],
            backend=be,
            limit=N_ITEMS,
            cache=True,
            output=tmp_path / name,
            progress=progress,
        )
    assert [b.done for b in bars] == [N_ITEMS, N_ITEMS]
    assert len(be.seen_moving) == N_ITEMS  # the second run asked the model nothing


def test_an_api_run_moves_the_bar_request_by_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """openai-chat against a real local HTTP server (benchmarks/latency_server.py), one request
    in flight: the bar shows each answer as it arrives (snapshots taken by the server's answer
    hook while the next request is being answered)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.latency_server import LatencyServer

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "c"))
    bars: list[_Bar] = []
    seen: list[int] = []  # the bar's count as each request reaches the server

    def answer(messages: Any) -> str:
        seen.append(bars[0].done if bars else -1)
        return "3"

    def progress(task: str, total: int) -> _Bar:
        bars.append(_Bar(task, total))
        return bars[-1]

    with LatencyServer(latency=0.05, answer=answer) as srv:
        args = f"base_url={srv.base_url},model=stub"
        evaluate(
            ["bfi"],
            model="openai-chat",
            model_args=args,
            limit=N_ITEMS,
            concurrency=1,
            output=tmp_path / "run",
            progress=progress,
        )
    assert bars[0].done == N_ITEMS
    # request k arrives after answers 1..k-1 were stored: the bar already counts most of them
    # (the store commits on its own thread, so it may trail by one); before, it read 0 until
    # the end
    assert seen[-1] >= N_ITEMS - 2
    assert seen == sorted(seen)
