"""Registers the core's administration modes (``item-by-item``, ``battery``, ``verbalized``) and
the condition that selects ``verbalized`` (``battery`` and ``single`` are registered with the
other built-in conditions)."""

from __future__ import annotations

from collections.abc import Callable

from psymetrics_core.administer.administration.battery import Battery
from psymetrics_core.administer.administration.item_by_item import ItemByItem
from psymetrics_core.administer.administration.verbalized import VERBALIZED, Verbalized
from psymetrics_core.contracts.conditions import Condition
from psymetrics_core.pluginsys.hookspecs import hookimpl

_STATE = "the model states what share of people choose each option (Meister et al., 2024)"


@hookimpl
def register_administrations(register: Callable[..., None]) -> None:
    """The three modes of the core."""
    register(ItemByItem.name, ItemByItem(), description="one prompt per item (the default)")
    register(
        Battery.name,
        Battery(),
        description='all items in one prompt, answered "index: score" (Huang et al., 2024)',
    )
    register(Verbalized.name, Verbalized(), description=_STATE)


@hookimpl(trylast=True)
def register_conditions(register: Callable[..., None]) -> None:
    """``--condition verbalized``: the ``verbalized`` mode (facet ``administration``)."""
    cond = Condition(VERBALIZED, administration=VERBALIZED)
    register(VERBALIZED, lambda _arg: cond, description=_STATE, facet="administration")
