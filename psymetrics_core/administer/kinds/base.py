"""What every task kind shares: the cell being run, the kind interface and chunked model calls.

A *kind* (``questionnaire``, ``free_text``, ``judged``, ``probe`` or a plugin's own, registered
with the ``register_task_kinds`` hook) knows how to administer one task in one *cell* (one
combination of conditions, bound to a seed) and to turn what came back into the task's entry in
``results.json``. The runner looks up a task's kind once and hands it a ``CellRun``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from psymetrics_core.administer.conditions import Cell
from psymetrics_core.backends.base import GenerationSettings, Reporter, call_backend
from psymetrics_core.base.types import Completion, Instrument, Item, Prompt
from psymetrics_core.records.writer import SampleWriter

if TYPE_CHECKING:
    from psymetrics_core.administer.judge import Judge
    from psymetrics_core.pluginsys.session import Session

__all__ = ["CellRun", "TaskKind", "instrument_record", "CHUNK", "in_chunks"]

CHUNK = 8  # prompts per backend call when the backend declares none; samples flush per chunk


@dataclass
class CellRun:
    """One task administered in one cell: everything a kind needs to run it.

    ``backend`` is the evaluated model (wrapped in the response cache when the run has one),
    ``judge`` the run's judge (built on first use), ``writer`` the ``samples.jsonl`` writer.
    """

    task: Instrument
    backend: Any
    settings: GenerationSettings
    form: str
    limit: int | None
    writer: SampleWriter
    reporter: Reporter | None
    cell: Cell
    repeat: int
    norm_group: str | None
    session: Session
    judge: Judge

    @property
    def tag(self) -> dict[str, Any]:
        """What every sample line records about the cell, the repeat and the seed."""
        return {**self.cell.record(), "repeat": self.repeat, "seed": self.settings.seed}

    def finish(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Add the instrument record and the cell's description to a task entry."""
        inst = self.task
        entry["instrument"] = instrument_record(inst)
        entry["prompt_template"] = inst.prompt_template
        entry.update(
            condition=self.cell.name,
            facets=self.cell.facets,
            repeat=self.repeat,
            seed=self.settings.seed,
            form=self.form,
        )
        return entry


class TaskKind:
    """How tasks of one kind are run. Subclasses override ``count`` and ``run_cell``, and
    ``requests`` where a cell's prompts are known before any answer."""

    name = ""

    def count(self, task: Instrument, form: str, limit: int | None, session: Session) -> int:
        """How many prompts one cell of ``task`` sends to the evaluated model (for progress)."""
        raise NotImplementedError

    def run_cell(self, run: CellRun) -> dict[str, Any]:
        """Administer ``run.task`` in ``run.cell``; return the task's ``results.json`` entry."""
        raise NotImplementedError

    def requests(self, run: CellRun) -> list[tuple[Prompt, GenerationSettings]] | None:
        """Every request ``run_cell`` will send to the evaluated model for ``run``, in order,
        rendered but not sent; None where a prompt may depend on an earlier answer (default).

        The run streams the requests of every cell that lists them ahead (scheduler.py).
        """
        return None


def instrument_record(inst: Instrument) -> dict[str, Any]:
    """Citation, licence, source, scoring rule and plugin of an instrument, for results."""
    plugin = inst.plugin
    return {
        "id": inst.id,
        "name": inst.name,
        "version": inst.version,
        "citation": inst.citation,
        "license_status": inst.license_status,
        "item_source": inst.item_source,
        "scoring_rule": inst.scoring_rule,
        "item_texts": "shipped" if inst.texts_shipped else "user-supplied",
        "plugin": plugin.name if plugin else None,
        "distribution": plugin.distribution if plugin else None,
        "plugin_version": plugin.version if plugin else None,
    }


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
