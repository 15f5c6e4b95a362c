"""One request stream per run: every prompt of every (task, cell, repeat) sent at once.

Cells run one after another, so an API backend drains its ``--concurrency`` slots at the end
of every cell and a local model batches only within a cell. Before the cells run, the runner
asks :func:`prefetch` to render every unit's prompts (with the kinds' own ``run_cell`` against a
recording backend: nothing is sent) and to send them through the run's response cache in one
call per sampling setting (per task as well for local models, which share the task's prompt
prefix). The cells then run exactly as before and find every response in the cache, so samples,
scores and their order are those of the sequential run; each response is stored as it arrives.

Only runs with a response cache, and only units of the built-in ``questionnaire`` kind outside
battery cells, are prefetched: other kinds' prompts may depend on earlier answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .backends.base import GenerationSettings, call_backend
from .results import SampleWriter
from .types import Completion, Prompt

__all__ = ["prefetch"]


class _Recorder:
    """Records the prompts of a cell and answers placeholders (no model call)."""

    chunk_size = 1_000_000

    def __init__(self) -> None:
        self.calls: list[tuple[Prompt, GenerationSettings]] = []

    def generate(
        self, prompts: Sequence[Prompt], settings: GenerationSettings, progress: Any = None
    ) -> list[Completion]:
        self.calls += [(p, settings) for p in prompts]
        return [Completion(text="") for _ in prompts]

    def option_logprobs(
        self, prompts: Sequence[Prompt], settings: GenerationSettings, progress: Any = None
    ) -> list[Completion]:
        self.calls += [(p, settings) for p in prompts]
        return [Completion(option_logprobs=tuple(0.0 for _ in p.options)) for p in prompts]


def prefetch(runs: Sequence[tuple[Any, Any]], backend: Any) -> int:
    """Send the prompts of ``runs`` ((kind, CellRun) pairs, in run order) through ``backend``
    (the run's cached backend) as one stream; returns how many prompts were sent."""
    streams: dict[tuple[Any, ...], list[Prompt]] = {}
    local = int(getattr(backend, "chunk_size", None) or 8) < 10_000
    for kind, run in runs:
        if run.cell.battery or getattr(kind, "name", "") != "questionnaire":
            continue
        rec = _Recorder()
        kind.run_cell(replace(run, backend=rec, writer=SampleWriter(None), reporter=None))
        for prompt, settings in rec.calls:
            key = (settings, run.task.id if local else "")
            streams.setdefault(key, []).append(prompt)
    sent = 0
    for (settings, _), prompts in streams.items():
        call_backend(backend, prompts, settings, None)
        sent += len(prompts)
    return sent
