"""Administration modes: how a questionnaire cell's items are put to the model.

A mode is selected by name (``Cell.administration``, set by a condition of the
``administration`` facet: ``--condition battery``); the ``questionnaire`` kind looks the name up
on the session and hands the mode the cell's items. The core registers ``item-by-item`` (one
prompt per item, the default), ``battery`` (all items in one prompt, answered
"index: score") and ``verbalized`` (the stated share of people per option); a plugin adds a
mode with the ``register_administrations`` hook (one class, one registration).

A mode whose judge rates whole scales instead of items (``interview-expert``) gives those
scale scores with ``rate_scales``: they replace the ``score`` hook's for those scales, before
the ``aggregate`` hook (so norms and z-scores apply to them as to any scale score).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.types import Answer, Instrument, Item, Prompt, ScaleScore
from psymetrics_core.contracts.kinds import CellRun

__all__ = ["Administration", "RatedScale"]


@dataclass(frozen=True)
class RatedScale:
    """A scale score a mode gives itself (``Administration.rate_scales``) and, when the score
    is None, why."""

    score: ScaleScore
    reason: str | None = None


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

    def rate_scales(
        self, inst: Instrument, form: str, answers: Sequence[tuple[Item, Answer]]
    ) -> dict[str, RatedScale]:
        """The scale scores this mode rates itself, from what ``administer`` returned (they
        replace the ``score`` hook's for those scales); none by default."""
        return {}
