"""Administration conditions: named, composable transforms of how an instrument is given.

A ``Condition`` changes one *facet* of the administration (option order, end of sentence,
wording, item order, administration mode, subject, persona, framing). A ``Cell`` is one
combination of conditions (one per facet) bound to a seed; the runner administers every cell
``repeats`` times. Conditions come from the ``register_conditions`` hook, so plugins can add more.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Instrument, Item, Option
from psymetrics_core.pluginsys.registries import ConditionEntry

__all__ = ["Condition", "Cell", "ConditionEntry", "build_cells", "item_rng", "DESIGNS"]

DESIGNS = ("grid", "each")


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
    - ``battery``: all items in one prompt answered as "index: score" (None = unchanged).
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
    battery: bool | None = None
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
    def battery(self) -> bool:
        """Whether items are given all in one prompt."""
        flags = [c.battery for c in self.conditions if c.battery is not None]
        return bool(flags and flags[-1])

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


def parse_condition(spec: str, registry: dict[str, ConditionEntry]) -> Condition:
    """Build one condition from ``NAME`` or ``NAME=ARG``; unknown names are a PsymError."""
    name, _, arg = spec.partition("=")
    name = name.strip()
    entry = registry.get(name)
    if entry is None:
        close = difflib.get_close_matches(name, list(registry), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise PsymError(f"unknown condition '{name}'{hint} (known: {', '.join(sorted(registry))})")
    if entry.takes_argument and not arg:
        raise PsymError(f"condition '{name}' needs an argument: --condition {name}=VALUE")
    if not entry.takes_argument and arg:
        raise PsymError(f"condition '{name}' takes no argument (got '{spec}')")
    cond = entry.factory(arg.strip() or None)
    if not cond.facet and name != "original":
        cond = replace(cond, facet=entry.facet)
    return cond


def build_cells(
    specs: Sequence[str], registry: dict[str, ConditionEntry], design: str = "grid"
) -> list[Cell]:
    """Expand ``--condition`` values into the cells to administer.

    ``design="grid"``: conditions are grouped by facet and every combination across facets
    is run; ``original`` adds the unchanged level to every facet. ``design="each"``: every
    value is its own cell (one factor at a time). ``A+B`` is always a single composed cell.
    """
    if design not in DESIGNS:
        raise PsymError(f"--design must be one of {', '.join(DESIGNS)}, got {design!r}")
    if not specs:
        return [Cell((Condition("original"),))]
    parsed: list[tuple[Condition, ...]] = []
    for spec in specs:
        pieces = spec.split("+")
        if not spec.strip() or any(not p.strip() for p in pieces):
            raise PsymError(
                f"--condition {spec!r}: empty condition name (expected NAME[=ARG][+NAME...])"
            )
        parts = tuple(parse_condition(p, registry) for p in pieces)
        facets = [c.facet for c in parts if c.facet]
        if len(facets) != len(set(facets)):
            raise PsymError(f"--condition {spec}: two conditions change the same facet")
        parsed.append(parts)
    if design == "each":
        return _dedupe([Cell(p) for p in parsed])
    has_original = any(len(p) == 1 and p[0].name == "original" for p in parsed)
    groups: dict[str, list[tuple[Condition, ...]]] = {}
    for p in parsed:
        if len(p) == 1 and p[0].name == "original":
            continue
        key = "+".join(sorted(c.facet for c in p))
        groups.setdefault(key, []).append(p)
    if not groups:
        return [Cell((Condition("original"),))]
    levels = [([()] if has_original else []) + g for g in groups.values()]
    cells = [Cell(sum(combo, ())) for combo in itertools.product(*levels)]
    return _dedupe([c if c.conditions else Cell((Condition("original"),)) for c in cells])


def _dedupe(cells: list[Cell]) -> list[Cell]:
    seen: set[str] = set()
    out: list[Cell] = []
    for c in cells:
        if c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out
