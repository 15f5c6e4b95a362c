"""Registry look-ups on the current session (``pluginsys.session.current_session()``).

Shortcuts for code that has no session at hand (the CLI, plugins' helpers); library code that
has one calls the same methods on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from psymetrics_core.base.types import Instrument
from psymetrics_core.pluginsys.registries import BackendEntry
from psymetrics_core.pluginsys.session import current_session

__all__ = [
    "instruments",
    "task_ids",
    "get_instrument",
    "backends",
    "parsers",
    "conditions",
    "kinds",
    "BackendEntry",
    "registration_failures",
]


def instruments() -> dict[str, Instrument]:
    """Every registered instrument by task id (invalid specs are reported and skipped)."""
    return current_session().instruments()


def task_ids() -> list[str]:
    """Every registered task id (specs are not parsed for this)."""
    return current_session().task_ids()


def registration_failures() -> list[str]:
    """One-line messages for instruments that failed validation at registration."""
    return current_session().registration_failures()


def get_instrument(task: str) -> Instrument:
    """The instrument registered as ``task``, or an error listing the close matches."""
    return current_session().get_instrument(task)


def backends() -> dict[str, BackendEntry]:
    """Every registered backend factory by name."""
    return current_session().backends()


def parsers() -> dict[str, Callable[..., tuple[int | None, str]]]:
    """Every registered response parser by name."""
    return current_session().parsers()


def conditions() -> dict[str, Any]:
    """Every registered administration condition by name (``ConditionEntry`` values)."""
    return current_session().conditions()


def kinds() -> dict[str, Any]:
    """Every registered task kind by name."""
    return current_session().kinds()
