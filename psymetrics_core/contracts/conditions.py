"""Administration conditions and cells: the types a condition plugin builds and the
``render_prompt`` hook receives.

A ``Condition`` changes one *facet* of the administration (option order, end of sentence,
wording, item order, administration mode, subject, persona, framing). A ``Cell`` is one
combination of conditions (one per facet) bound to a seed; the runner administers every cell
``repeats`` times. Conditions come from the ``register_conditions`` hook, so plugins can add more.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from psymetrics_core.base.types import Instrument, Item, Option

__all__ = ["Condition", "Cell", "item_rng", "ITEM_BY_ITEM"]

ITEM_BY_ITEM = "item-by-item"  # the default administration mode: one item per prompt


def item_rng(seed: int, *parts: object) -> random.Random:
    """A ``random.Random`` seeded deterministically from ``seed`` and ``parts`` (e.g. item id)."""
    key = ":".join([str(seed), *map(str, parts)]).encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


@dataclass(frozen=True)
class Condition:
    """One named transform. Every transform is optional; the identity is ``Condition("original")``.

    - ``form``: administer this instrument form instead of the requested one;
    - ``items(instrument, items, seed)``: reorder or rewrite the list of items;
    - ``instrument(instrument)``: change instrument-level text (eos, instruction, labels);
    - ``options(instrument, item, options, seed)``: the presented option order (values stay
      attached to their labels);
    - ``text(instrument, item, text)``: rewrite the rendered user message;
    - ``messages(messages)``: change the chat messages (system prompts);
    - ``administration``: the name of the administration mode that puts the items to the
      model (``item-by-item``, ``battery`` or a plugin's; None = unchanged).
    ``info`` is recorded with every sample (e.g. which framing text variant was used).
    """

    name: str
    facet: str = ""
    form: str | None = None
    items: Callable[[Instrument, list[Item], int], list[Item]] | None = None
    instrument: Callable[[Instrument], Instrument] | None = None
    options: Callable[[Instrument, Item, tuple[Option, ...], int], tuple[Option, ...]] | None = None
    text: Callable[[Instrument, Item, str], str] | None = None
    messages: Callable[[list[dict[str, str]]], list[dict[str, str]]] | None = None
    administration: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Cell:
    """One combination of conditions (at most one per facet), as administered."""

    conditions: tuple[Condition, ...]
    seed: int = 0  # the repetition's seed; seeded transforms derive per-item seeds from it

    def bind(self, seed: int) -> Cell:
        """This cell for the repetition with ``seed``."""
        return replace(self, seed=seed)

    @property
    def name(self) -> str:
        """``original`` for the identity cell, else the condition names joined by ``+``."""
        names = [c.name for c in self.conditions if c.name != "original"]
        return "+".join(names) if names else "original"

    @property
    def facets(self) -> dict[str, str]:
        """Facet -> condition name (facets left at their default are absent)."""
        return {c.facet: c.name for c in self.conditions if c.facet}

    @property
    def administration(self) -> str:
        """The administration mode's name: the last condition's that sets one, else
        ``item-by-item``."""
        modes = [c.administration for c in self.conditions if c.administration is not None]
        return modes[-1] if modes else ITEM_BY_ITEM

    def form(self, default: str) -> str:
        """The form to administer."""
        forms = [c.form for c in self.conditions if c.form]
        return forms[-1] if forms else default

    def apply_items(self, inst: Instrument, items: list[Item], seed: int) -> list[Item]:
        """Apply every condition's item transform in order."""
        for c in self.conditions:
            if c.items is not None:
                items = c.items(inst, items, seed)
        return items

    def apply_instrument(self, inst: Instrument) -> Instrument:
        """Apply every condition's instrument transform in order."""
        for c in self.conditions:
            if c.instrument is not None:
                inst = c.instrument(inst)
        return inst

    def apply_options(
        self, inst: Instrument, item: Item, options: tuple[Option, ...], seed: int
    ) -> tuple[Option, ...]:
        """The option order presented for ``item``."""
        for c in self.conditions:
            if c.options is not None:
                options = c.options(inst, item, options, seed)
        return options

    def apply_text(self, inst: Instrument, item: Item, text: str) -> str:
        """Rewrite the rendered user message."""
        for c in self.conditions:
            if c.text is not None:
                text = c.text(inst, item, text)
        return text

    def apply_messages(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """Change the chat messages (persona, framing)."""
        for c in self.conditions:
            if c.messages is not None:
                messages = c.messages(messages)
        return messages

    def record(self) -> dict[str, Any]:
        """What every sample line records about this cell."""
        return {
            "condition": self.name,
            "conditions": [c.name for c in self.conditions],
            "facets": self.facets,
            "condition_info": {c.name: c.info for c in self.conditions if c.info},
        }
