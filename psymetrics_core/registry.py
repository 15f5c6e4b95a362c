"""Registries built once per process from the registration hooks, with provenance."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .errors import PsymError, SpecError, UnknownTaskError
from .types import Instrument, PluginInfo

__all__ = [
    "instruments",
    "get_instrument",
    "backends",
    "parsers",
    "conditions",
    "BackendEntry",
    "clear_caches",
    "registration_failures",
]

_CACHE: dict[str, Any] = {}


@dataclass(frozen=True)
class BackendEntry:
    """A registered backend factory and the plugin that registered it."""

    name: str
    factory: Callable[[dict[str, str]], Any]
    description: str
    plugin: PluginInfo


def clear_caches() -> None:
    """Forget every registry (after the plugin manager changed)."""
    _CACHE.clear()


def _plugin_info(plugin_name: str) -> PluginInfo:
    from .plugins import plugin_records

    for rec in plugin_records():
        if rec.name == plugin_name:
            return PluginInfo(rec.name, rec.distribution, rec.version)
    return PluginInfo(plugin_name)


def _each_impl(hook_name: str) -> list[Any]:
    from .plugins import get_plugin_manager

    pm = get_plugin_manager()
    return list(reversed(getattr(pm.hook, hook_name).get_hookimpls()))


def registration_failures() -> list[str]:
    """One-line messages for instruments that failed validation at registration."""
    instruments()
    failures = _CACHE["instrument_failures"]
    assert isinstance(failures, list)
    return failures


def instruments() -> dict[str, Instrument]:
    """Every registered instrument by task id (invalid specs are reported and skipped)."""
    if "instruments" in _CACHE:
        return _CACHE["instruments"]  # type: ignore[no-any-return]
    from .spec import load_instrument

    found: dict[str, Instrument] = {}
    failures: list[str] = []
    for impl in _each_impl("register_instruments"):
        info = _plugin_info(impl.plugin_name)

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
    _CACHE["instruments"] = found
    _CACHE["instrument_failures"] = failures
    return found


def get_instrument(task: str) -> Instrument:
    """The instrument registered as ``task``, or an error listing the close matches."""
    insts = instruments()
    if task in insts:
        return insts[task]
    close = difflib.get_close_matches(task, list(insts), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    failed = _failed_plugin_hint()
    raise UnknownTaskError(
        f"unknown task '{task}'{hint} (installed: {', '.join(sorted(insts)) or 'none'}){failed}"
    )


def _failed_plugin_hint() -> str:
    from .plugins import plugin_records

    failed = [r.name for r in plugin_records() if r.status == "failed"]
    return f"; plugins that failed to load: {', '.join(failed)}" if failed else ""


def backends() -> dict[str, BackendEntry]:
    """Every registered backend factory by name."""
    if "backends" in _CACHE:
        return _CACHE["backends"]  # type: ignore[no-any-return]
    found: dict[str, BackendEntry] = {}
    for impl in _each_impl("register_backends"):
        info = _plugin_info(impl.plugin_name)

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
    _CACHE["backends"] = found
    return found


def parsers() -> dict[str, Callable[..., tuple[int | None, str]]]:
    """Every registered response parser by name."""
    if "parsers" in _CACHE:
        return _CACHE["parsers"]  # type: ignore[no-any-return]
    found: dict[str, Callable[..., tuple[int | None, str]]] = {}
    for impl in _each_impl("register_parsers"):

        def register(name: str, function: Callable[..., tuple[int | None, str]]) -> None:
            found[name] = function

        impl.function(register=register)
    _CACHE["parsers"] = found
    return found


def conditions() -> dict[str, Any]:
    """Every registered administration condition by name (``ConditionEntry`` values)."""
    if "conditions" in _CACHE:
        return _CACHE["conditions"]  # type: ignore[no-any-return]
    from .conditions.base import ConditionEntry

    found: dict[str, ConditionEntry] = {}
    for impl in _each_impl("register_conditions"):

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
    _CACHE["conditions"] = found
    return found
