"""Registries built from the registration hooks of one plugin manager, with provenance.

Pure builders: each function takes the plugin manager (and its load records) and returns what
the plugins registered. A ``psymetrics_core.session.Session`` calls them once and keeps the
result; nothing here holds state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pluggy

from .errors import PsymError, SpecError
from .plugin_loader import PluginRecord
from .types import Instrument, PluginInfo

__all__ = [
    "BackendEntry",
    "build_instruments",
    "build_backends",
    "build_parsers",
    "build_conditions",
    "build_kinds",
]


@dataclass(frozen=True)
class BackendEntry:
    """A registered backend factory and the plugin that registered it."""

    name: str
    factory: Callable[[dict[str, str]], Any]
    description: str
    plugin: PluginInfo


def plugin_info(records: Sequence[PluginRecord], plugin_name: str) -> PluginInfo:
    """Name, distribution and version of the plugin registered as ``plugin_name``."""
    for rec in records:
        if rec.name == plugin_name:
            return PluginInfo(rec.name, rec.distribution, rec.version)
    return PluginInfo(plugin_name)


def _each_impl(pm: pluggy.PluginManager, hook_name: str) -> list[Any]:
    return list(reversed(getattr(pm.hook, hook_name).get_hookimpls()))


def build_instruments(
    pm: pluggy.PluginManager, records: Sequence[PluginRecord]
) -> tuple[dict[str, Instrument], list[str]]:
    """Every registered instrument by task id, and one line per spec that failed validation."""
    from .spec import load_instrument

    found: dict[str, Instrument] = {}
    failures: list[str] = []
    for impl in _each_impl(pm, "register_instruments"):
        info = plugin_info(records, impl.plugin_name)

        def register(obj: Instrument | str | Path, _info: PluginInfo = info) -> None:
            try:
                inst = obj if isinstance(obj, Instrument) else load_instrument(obj)
            except SpecError as exc:
                failures.append(f"plugin '{_info.name}': {exc}")
                return
            inst = replace(inst, plugin=_info)
            if inst.id in found:
                other = found[inst.id].plugin
                raise PsymError(
                    f"task id '{inst.id}' is registered twice: by plugin "
                    f"'{other.name if other else '?'}' and by plugin '{_info.name}'"
                )
            found[inst.id] = inst

        impl.function(register=register)
    return found, failures


def build_backends(
    pm: pluggy.PluginManager, records: Sequence[PluginRecord]
) -> dict[str, BackendEntry]:
    """Every registered backend factory by name."""
    found: dict[str, BackendEntry] = {}
    for impl in _each_impl(pm, "register_backends"):
        info = plugin_info(records, impl.plugin_name)

        def register(
            name: str,
            factory: Callable[[dict[str, str]], Any],
            description: str = "",
            _info: PluginInfo = info,
        ) -> None:
            if name in found:
                raise PsymError(
                    f"backend '{name}' is registered twice: by plugin "
                    f"'{found[name].plugin.name}' and by plugin '{_info.name}'"
                )
            found[name] = BackendEntry(name, factory, description, _info)

        impl.function(register=register)
    return found


def build_parsers(pm: pluggy.PluginManager) -> dict[str, Callable[..., tuple[int | None, str]]]:
    """Every registered response parser by name."""
    found: dict[str, Callable[..., tuple[int | None, str]]] = {}
    for impl in _each_impl(pm, "register_parsers"):

        def register(name: str, function: Callable[..., tuple[int | None, str]]) -> None:
            found[name] = function

        impl.function(register=register)
    return found


def build_conditions(pm: pluggy.PluginManager) -> dict[str, Any]:
    """Every registered administration condition by name (``ConditionEntry`` values)."""
    from .conditions.base import ConditionEntry

    found: dict[str, ConditionEntry] = {}
    for impl in _each_impl(pm, "register_conditions"):

        def register(
            name: str,
            factory: Callable[[str | None], Any],
            description: str = "",
            facet: str = "",
            takes_argument: bool = False,
            _plugin: str = impl.plugin_name,
        ) -> None:
            if name in found:
                raise PsymError(
                    f"condition '{name}' is registered twice: by plugin "
                    f"'{found[name].plugin}' and by plugin '{_plugin}'"
                )
            found[name] = ConditionEntry(name, factory, description, facet, takes_argument, _plugin)

        impl.function(register=register)
    return found


def build_kinds(pm: pluggy.PluginManager) -> dict[str, Any]:
    """Every registered task kind by name (``psymetrics_core.kinds.TaskKind`` objects)."""
    found: dict[str, Any] = {}
    for impl in _each_impl(pm, "register_task_kinds"):

        def register(name: str, kind: Any, _plugin: str = impl.plugin_name) -> None:
            if name in found:
                raise PsymError(
                    f"task kind '{name}' is registered twice (again by plugin '{_plugin}')"
                )
            found[name] = kind

        impl.function(register=register)
    return found
