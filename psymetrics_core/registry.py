"""Registries built once per process from the registration hooks, with provenance."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .errors import SpecError, UnknownTaskError
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


_HOOK_ERRORS = (Exception, SystemExit, KeyboardInterrupt)


def _warn(message: str) -> None:
    """Report a registration problem once, in one line, on stderr."""
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
                first = other.name if other else "?"
                swap, message = _clash("task id", inst.id, first, _info.name)
                failures.append(message)
                if not swap:
                    return
            found[inst.id] = inst

        _call_hook(impl, "register_instruments", register, failures.append)
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
    _CACHE["backends"] = found
    return found


def parsers() -> dict[str, Callable[..., tuple[int | None, str]]]:
    """Every registered response parser by name."""
    if "parsers" in _CACHE:
        return _CACHE["parsers"]  # type: ignore[no-any-return]
    found: dict[str, Callable[..., tuple[int | None, str]]] = {}
    for impl in _each_impl("register_parsers"):

        def register(
            name: str, function: Callable[..., tuple[int | None, str]], _plugin: str = ""
        ) -> None:
            if not isinstance(name, str) or not name or not callable(function):
                _warn(
                    f"plugin '{_plugin}': register_parsers registered {name!r:.40} with "
                    f"{type(function).__name__} (expected a name and a function); skipped"
                )
                return
            found[name] = function

        _call_hook(
            impl,
            "register_parsers",
            functools.partial(register, _plugin=impl.plugin_name),
            _warn,
        )
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
    _CACHE["conditions"] = found
    return found
