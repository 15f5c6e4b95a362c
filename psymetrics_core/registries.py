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

from .errors import SpecError
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


_HOOK_ERRORS = (Exception, SystemExit, KeyboardInterrupt)


def _warn(message: str) -> None:
    """Report a registration problem in one line on stderr (the registry is built once)."""
    import sys

    print(f"psym: {message}", file=sys.stderr)


def _call_hook(
    impl: Any, hook: str, register: Callable[..., None], report: Callable[[str], None]
) -> None:
    """Call one plugin's registration hook; whatever it raises is reported, never propagated."""
    try:
        impl.function(register=register)
    except _HOOK_ERRORS as exc:
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        report(f"plugin '{impl.plugin_name}': {hook} failed ({reason}); its other entries are kept")


def _builtin(plugin: str) -> bool:
    return plugin.startswith("psymetrics_core.")


def _clash(kind: str, name: str, first: str, second: str) -> tuple[bool, str]:
    """Whether the second registration replaces the first, and the one-line report.

    The core's own entry always wins over a third-party plugin's; otherwise the first stays.
    """
    replace_first = _builtin(second) and not _builtin(first)
    kept = second if replace_first else first
    return replace_first, (
        f"{kind} '{name}' is registered by both plugin '{first}' and plugin '{second}'; "
        f"using '{kept}'s (uninstall or disable one: PSYM_DISABLE_PLUGINS)"
    )


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
            if not isinstance(obj, Instrument | str | Path):
                failures.append(
                    f"plugin '{_info.name}': registered {type(obj).__name__} {obj!r:.60} "
                    "(expected an Instrument or the path of an instrument.yaml)"
                )
                return
            try:
                inst = obj if isinstance(obj, Instrument) else load_instrument(obj)
            except SpecError as exc:
                failures.append(f"plugin '{_info.name}': {exc}")
                return
            inst = replace(inst, plugin=_info)
            if inst.id in found:
                other = found[inst.id].plugin
                swap, message = _clash("task id", inst.id, other.name if other else "?", _info.name)
                failures.append(message)
                if not swap:
                    return
            found[inst.id] = inst

        _call_hook(impl, "register_instruments", register, failures.append)
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
            if not isinstance(name, str) or not name or not callable(factory):
                _warn(
                    f"plugin '{_info.name}': register_backends registered {name!r:.40} with "
                    f"{type(factory).__name__} (expected a name and a factory function); skipped"
                )
                return
            if name in found:
                swap, message = _clash("backend", name, found[name].plugin.name, _info.name)
                _warn(message)
                if not swap:
                    return
            found[name] = BackendEntry(name, factory, str(description), _info)

        _call_hook(impl, "register_backends", register, _warn)
    return found


def build_parsers(pm: pluggy.PluginManager) -> dict[str, Callable[..., tuple[int | None, str]]]:
    """Every registered response parser by name."""
    found: dict[str, Callable[..., tuple[int | None, str]]] = {}
    for impl in _each_impl(pm, "register_parsers"):

        def register(
            name: str,
            function: Callable[..., tuple[int | None, str]],
            _plugin: str = impl.plugin_name,
        ) -> None:
            if not isinstance(name, str) or not name or not callable(function):
                _warn(
                    f"plugin '{_plugin}': register_parsers registered {name!r:.40} with "
                    f"{type(function).__name__} (expected a name and a function); skipped"
                )
                return
            found[name] = function

        _call_hook(impl, "register_parsers", register, _warn)
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
            if not isinstance(name, str) or not name or not callable(factory):
                _warn(
                    f"plugin '{_plugin}': register_conditions registered {name!r:.40} with "
                    f"{type(factory).__name__} (expected a name and a factory); skipped"
                )
                return
            if name in found:
                swap, message = _clash("condition", name, found[name].plugin, _plugin)
                _warn(message)
                if not swap:
                    return
            found[name] = ConditionEntry(
                name, factory, str(description), str(facet), bool(takes_argument), _plugin
            )

        _call_hook(impl, "register_conditions", register, _warn)
    return found


def build_kinds(pm: pluggy.PluginManager) -> dict[str, Any]:
    """Every registered task kind by name (``psymetrics_core.kinds.TaskKind`` objects)."""
    found: dict[str, Any] = {}
    for impl in _each_impl(pm, "register_task_kinds"):

        def register(name: str, kind: Any, _plugin: str = impl.plugin_name) -> None:
            if not isinstance(name, str) or not name:
                _warn(f"plugin '{_plugin}': register_task_kinds registered {name!r:.40}; skipped")
                return
            if name in found:
                _warn(f"task kind '{name}' is registered twice (again by plugin '{_plugin}'); "
                      "the first is kept")  # fmt: skip
                return
            found[name] = kind

        _call_hook(impl, "register_task_kinds", register, _warn)
    return found
