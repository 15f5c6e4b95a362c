"""Administration conditions (see ``base``) and the built-in ones (see ``builtin``)."""

from __future__ import annotations

from psymetrics_core.administer.conditions.base import (
    DESIGNS,
    Cell,
    Condition,
    ConditionEntry,
    build_cells,
    item_rng,
)

__all__ = ["Cell", "Condition", "ConditionEntry", "DESIGNS", "build_cells", "item_rng", "cells_for"]


def cells_for(specs: list[str] | tuple[str, ...], design: str = "grid") -> list[Cell]:
    """The cells to administer for ``--condition`` values, using the registered conditions."""
    from psymetrics_core.pluginsys.registry import conditions

    return build_cells(list(specs), conditions(), design)
