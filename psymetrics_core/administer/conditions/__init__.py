"""Administration conditions (see ``base``) and the built-in ones (see ``builtin``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from psymetrics_core.administer.conditions.base import (
    DESIGNS,
    Cell,
    Condition,
    ConditionEntry,
    build_cells,
    item_rng,
)

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["Cell", "Condition", "ConditionEntry", "DESIGNS", "build_cells", "item_rng", "cells_for"]


def cells_for(
    specs: list[str] | tuple[str, ...], session: Session, design: str = "grid"
) -> list[Cell]:
    """The cells to administer for ``--condition`` values, using ``session``'s conditions."""
    return build_cells(list(specs), session.conditions(), design)
