"""Administration modes: how a questionnaire cell's items are put to the model.

A mode is selected by name (``Cell.administration``, set by a condition of the
``administration`` facet: ``--condition battery``); the ``questionnaire`` kind looks the name up
on the session and hands the mode the cell's items. The core registers ``item-by-item`` (one
prompt per item, the default), ``battery`` (all items in one prompt, answered
"index: score") and ``verbalized`` (the stated share of people per option); a plugin adds a
mode with the ``register_administrations`` hook (one class, one registration).
"""

from __future__ import annotations

from typing import Any

from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.types import Answer, Item, Prompt
from psymetrics_core.contracts.kinds import CellRun

__all__ = ["Administration"]


class Administration:
    """One administration mode. Subclasses set ``name`` and override ``administer`` (and
    ``requests`` where the prompts are known before any answer)."""

    name = ""
    #: True when the mode's samples state each item's distribution (``stated_shares``) instead
    #: of an answer: the run's distribution method is then "verbalized" (``results.json``)
    states_distribution = False

    def requests(
        self, run: CellRun, items: list[Item]
    ) -> list[tuple[Prompt, GenerationSettings]] | None:
        """Every request ``administer`` will send for ``items``, rendered but not sent; None
        where a prompt may depend on an earlier answer or the mode sends its own (default)."""
        return None

    def administer(self, run: CellRun, items: list[Item]) -> list[tuple[Item, Answer]]:
        """Put ``items`` to ``run``'s model, write one ``samples.jsonl`` line per item and
        return each item with its parsed answer, in the order given."""
        raise NotImplementedError

    def annotate(self, entry: dict[str, Any]) -> dict[str, Any]:
        """The cell's task entry (the ``aggregate`` hook's), with whatever the mode adds (e.g.
        why a scale has no score); the default adds nothing."""
        return entry
