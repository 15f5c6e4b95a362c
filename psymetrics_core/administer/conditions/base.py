"""Expanding ``--condition`` values into cells (the ``Condition`` and ``Cell`` types live in
``contracts.conditions``, below the plugin system, so hooks and the Session take them typed)."""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Sequence
from dataclasses import replace

from psymetrics_core.base.errors import PsymError
from psymetrics_core.contracts.conditions import Cell, Condition, item_rng
from psymetrics_core.pluginsys.registries import ConditionEntry

__all__ = ["Condition", "Cell", "ConditionEntry", "build_cells", "item_rng", "DESIGNS"]

DESIGNS = ("grid", "each")
#: conditions that are no more, and what replaced them (one line, instead of "unknown")
RETIRED = {
    "interview-midpoint": "--condition interview --impute midpoint (the imputation is an "
    "option for every interview judge method now)",
}


def parse_condition(spec: str, registry: dict[str, ConditionEntry]) -> Condition:
    """Build one condition from ``NAME`` or ``NAME=ARG``; unknown names are a PsymError."""
    name, _, arg = spec.partition("=")
    name = name.strip()
    entry = registry.get(name)
    if entry is None and name in RETIRED:
        raise PsymError(f"condition '{name}' is retired: use {RETIRED[name]}")
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
