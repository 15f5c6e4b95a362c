"""Task kinds: the ``TaskKind`` interface a kind implements and the ``CellRun`` it is handed.

A *kind* (``questionnaire``, ``free_text``, ``judged``, ``probe`` or a plugin's own, registered
with the ``register_task_kinds`` hook) knows how to administer one task in one *cell* (one
combination of conditions, bound to a seed) and to turn what came back into the task's entry in
``results.json``. The runner looks up a task's kind once and hands it a ``CellRun``.

``SessionView`` is what a kind may ask of the session it runs on (the pipeline hooks, the
parsers, the administration modes); ``pluginsys.session.Session`` provides it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

from psymetrics_core.backends.base import Backend, GenerationSettings, Reporter
from psymetrics_core.base.types import Instrument, Option, Prompt
from psymetrics_core.contracts.conditions import Cell
from psymetrics_core.contracts.judging import StageJudge
from psymetrics_core.records.writer import SampleWriter

if TYPE_CHECKING:
    from psymetrics_core.contracts.administration import Administration

__all__ = ["CellRun", "TaskKind", "SessionView", "Parser", "instrument_record"]

Parser = Callable[[str, Sequence[Option]], tuple[int | None, str]]


class SessionView(Protocol):
    """What a kind, an administration mode or a pipeline hook may ask of the session."""

    @property
    def hook(self) -> pluggy.HookRelay:
        """The pipeline hooks of the session's plugins."""
        ...

    def parsers(self) -> dict[str, Parser]:
        """Every registered response parser by name."""
        ...

    def administration(self, name: str) -> Administration:
        """The administration mode registered as ``name``."""
        ...


@dataclass
class CellRun:
    """One task administered in one cell: everything a kind needs to run it.

    ``backend`` is the evaluated model (wrapped in the response cache when the run has one),
    ``judge`` the run's judge (built on first use), ``writer`` the ``samples.jsonl`` writer.
    """

    task: Instrument
    backend: Backend
    settings: GenerationSettings
    form: str
    limit: int | None
    writer: SampleWriter
    reporter: Reporter | None
    cell: Cell
    repeat: int
    norm_group: str | None
    session: SessionView
    judge: StageJudge
    #: how an interview judge's "none" is scored: None (missing) or "midpoint" (``--impute``)
    impute: str | None = None

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
    #: False for a kind that asks no model (``psym import answers`` records answers given
    #: elsewhere): its tasks need no item texts and the run states no distribution method
    asks_model = True

    def count(self, task: Instrument, form: str, limit: int | None, session: SessionView) -> int:
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
