"""What every task kind shares: the cell being run, the kind interface and chunked model calls.

A *kind* (``questionnaire``, ``free_text``, ``judged``, ``probe`` or a plugin's own, registered
with the ``register_task_kinds`` hook) knows how to administer one task in one *cell* (one
combination of conditions, bound to a seed) and to turn what came back into the task's entry in
``results.json``. The runner looks up a task's kind once and hands it a ``CellRun``. The
``CellRun`` and ``TaskKind`` types live in ``contracts.kinds`` (below the plugin system, so the
Session hands kinds out typed); this module keeps the helpers every kind uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from psymetrics_core.backends.base import GenerationSettings, call_backend
from psymetrics_core.base.types import Completion, Item, Prompt
from psymetrics_core.contracts.kinds import CellRun, TaskKind, instrument_record

__all__ = ["CellRun", "TaskKind", "instrument_record", "CHUNK", "in_chunks"]

CHUNK = 8  # prompts per backend call when the backend declares none; samples flush per chunk


def in_chunks(
    run: CellRun,
    items: Sequence[Item],
    prompts: Sequence[Prompt],
    settings: GenerationSettings | None = None,
) -> Iterator[tuple[Item, Prompt, Completion]]:
    """Send ``prompts`` to the evaluated model in chunks of its ``chunk_size``; yield each
    (item, prompt, completion) as its chunk returns, so samples are written before the next."""
    settings = settings or run.settings
    size = max(1, int(run.backend.chunk_size or CHUNK))
    for start in range(0, len(prompts), size):
        chunk_items = items[start : start + size]
        chunk_prompts = prompts[start : start + size]
        completions = call_backend(run.backend, chunk_prompts, settings, run.reporter)
        yield from zip(chunk_items, chunk_prompts, completions, strict=True)
