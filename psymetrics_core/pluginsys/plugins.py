"""Plugin-manager shortcuts on the current session (see ``psymetrics_core.pluginsys.session``).

Environment variables read when a session loads the installed plugins:

- ``PSYM_LOAD_PLUGINS``: comma-separated allow-list of entry-point names (``""`` loads none).
- ``PSYM_DISABLE_PLUGINS``: comma-separated block-list of entry-point names.
- ``PSYM_STRICT_PLUGINS=1``: a plugin that fails to load is an error instead of a warning.
"""

from __future__ import annotations

import pluggy

from psymetrics_core.pluginsys.loader import (
    DEFAULT_PLUGINS,
    ENTRY_POINT_GROUP,
    PluginRecord,
    make_plugin_manager,
)
from psymetrics_core.pluginsys.session import current_session

__all__ = [
    "ENTRY_POINT_GROUP",
    "DEFAULT_PLUGINS",
    "PluginRecord",
    "make_plugin_manager",
    "get_plugin_manager",
    "plugin_records",
]


def get_plugin_manager() -> pluggy.PluginManager:
    """The current session's plugin manager."""
    return current_session().pm


def plugin_records() -> list[PluginRecord]:
    """Load records of every plugin the current session considered."""
    return current_session().records
