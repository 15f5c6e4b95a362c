"""Registers the core's administration modes: ``item-by-item`` and ``battery``."""

from __future__ import annotations

from collections.abc import Callable

from psymetrics_core.administer.administration.battery import Battery
from psymetrics_core.administer.administration.item_by_item import ItemByItem
from psymetrics_core.pluginsys.hookspecs import hookimpl


@hookimpl
def register_administrations(register: Callable[..., None]) -> None:
    """The two modes of the core."""
    register(ItemByItem.name, ItemByItem(), description="one prompt per item (the default)")
    register(
        Battery.name,
        Battery(),
        description='all items in one prompt, answered "index: score" (Huang et al., 2024)',
    )
