"""Registries built from the registration hooks of one plugin manager, with provenance.

Pure builders: each function takes the plugin manager (and its load records) and returns what
the plugins registered. A ``pluginsys.session.Session`` calls them once and keeps the
result; nothing here holds state.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pluggy

from psymetrics_core.backends.base import Backend
from psymetrics_core.base.errors import SpecError
from psymetrics_core.base.types import Instrument, LazyInstrument, PluginInfo
from psymetrics_core.contracts.administration import Administration
from psymetrics_core.contracts.analyses import Analysis
from psymetrics_core.contracts.conditions import Condition
from psymetrics_core.contracts.kinds import Parser, TaskKind
from psymetrics_core.instruments import spec
from psymetrics_core.pluginsys.loader import PluginRecord

__all__ = [
    "AdministrationEntry",
    "AnalysisEntry",
    "BackendEntry",
    "InstrumentTable",
    "build_instruments",
    "build_backends",
    "build_parsers",
    "build_conditions",
    "build_kinds",
    "build_administrations",
    "build_analyses",
]


@dataclass(frozen=True)
class BackendEntry:
    """A registered backend factory and the plugin that registered it."""

    name: str
    factory: Callable[[dict[str, str]], Backend]
    description: str
    plugin: PluginInfo
    # the --model-args keys the backend accepts, with one line of help each (``args=``)
    args: tuple[tuple[str, str], ...] = ()


def plugin_info(records: Sequence[PluginRecord], plugin_name: str) -> PluginInfo:
    """Name, distribution and version of the plugin registered as ``plugin_name``."""
    for rec in records:
        if rec.name == plugin_name:
            return PluginInfo(rec.name, rec.distribution, rec.version)
    return PluginInfo(plugin_name)


def _each_impl(pm: pluggy.PluginManager, hook_name: str) -> list[pluggy.HookImpl]:
    return list(reversed(getattr(pm.hook, hook_name).get_hookimpls()))


_HOOK_ERRORS = (Exception, SystemExit, KeyboardInterrupt)


def _warn(message: str) -> None:
    """Report a registration problem in one line on stderr (the registry is built once)."""

    print(f"psym: {message}", file=sys.stderr)


def _call_hook(
    impl: pluggy.HookImpl, hook: str, register: Callable[..., None], report: Callable[[str], None]
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

    The one clash policy of every registry (task ids, backends, conditions, administration
    modes, analyses): the core's own entry always wins over a third-party plugin's; of two
    third-party plugins the first registered stays. Never silent: the line names both.
    """
    replace_first = _builtin(second) and not _builtin(first)
    kept = second if replace_first else first
    return replace_first, (
        f"{kind} '{name}' is registered by both plugin '{first}' and plugin '{second}'; "
        f"using '{kept}'s (uninstall or disable one: PSYM_DISABLE_PLUGINS)"
    )


def _kept_first(kind: str, name: str, owners: dict[str, str], plugin: str) -> bool:
    """``_clash`` for a registry that keeps bare values: whether ``plugin``'s registration of
    ``name`` is dropped (the line said why); ``owners`` (name -> plugin) is updated."""
    if name in owners:
        swap, message = _clash(kind, name, owners[name], plugin)
        _warn(message)
        if not swap:
            return True
    owners[name] = plugin
    return False


@dataclass(frozen=True)
class _Deferred:
    """A task registered as a ``LazyInstrument``: its builder, called when first needed."""

    plugin: PluginInfo
    build: Callable[[], Instrument]


class InstrumentTable:
    """The registered instruments by task id.

    A spec file is parsed and validated when it is registered; a ``LazyInstrument`` is built
    when its task is first asked for (:meth:`get`), or for :meth:`load_all`.
    """

    def __init__(self) -> None:
        self.failures: list[str] = []
        self._entries: dict[str, Instrument | _Deferred] = {}  # in registration order

    def __contains__(self, task: object) -> bool:
        return task in self._entries

    def ids(self) -> list[str]:
        """Every registered task id, built or not."""
        return list(self._entries)

    def put(self, task: str, entry: Instrument | _Deferred) -> None:
        """Register ``entry`` as ``task`` (a replaced task keeps its place)."""
        self._entries[task] = entry

    def owner(self, task: str) -> str:
        """The name of the plugin that registered ``task``."""
        entry = self._entries[task]
        return entry.plugin.name if entry.plugin else "?"

    def get(self, task: str) -> Instrument:
        """The instrument of ``task`` (KeyError when unregistered; SpecError when its builder
        fails: the task is then dropped and the failure recorded)."""
        entry = self._entries[task]
        if isinstance(entry, Instrument):
            return entry
        try:
            inst = replace(_build(entry, task), plugin=entry.plugin)
        except SpecError as exc:
            del self._entries[task]
            self.failures.append(f"plugin '{entry.plugin.name}': {exc}")
            raise
        self._entries[task] = inst
        return inst

    def load_all(self) -> dict[str, Instrument]:
        """Every instrument, building the lazy ones (failures go to :attr:`failures`)."""
        for task, entry in list(self._entries.items()):
            if isinstance(entry, _Deferred):
                try:
                    self.get(task)
                except SpecError:
                    pass  # recorded by get()
        return {t: e for t, e in self._entries.items() if isinstance(e, Instrument)}


def _build(entry: _Deferred, task: str) -> Instrument:
    """The instrument of a lazy task; whatever goes wrong is a one-line SpecError."""
    where = Path(f"<plugin {entry.plugin.name}>")
    try:
        inst = entry.build()
    except _HOOK_ERRORS as exc:
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        raise SpecError(where, f"building task '{task}' failed ({reason})") from None
    if not isinstance(inst, Instrument):
        raise SpecError(
            where, f"building task '{task}' returned {type(inst).__name__}, not an Instrument"
        )
    if inst.id != task:
        raise SpecError(where, f"task '{task}' was registered, but its instrument is '{inst.id}'")
    return inst


def build_instruments(pm: pluggy.PluginManager, records: Sequence[PluginRecord]) -> InstrumentTable:
    """Every registered instrument by task id, and one line per spec that failed validation."""
    table = InstrumentTable()
    for impl in _each_impl(pm, "register_instruments"):
        info = plugin_info(records, impl.plugin_name)

        def register(
            obj: Instrument | LazyInstrument | str | Path, _info: PluginInfo = info
        ) -> None:
            if not isinstance(obj, Instrument | LazyInstrument | str | Path):
                table.failures.append(
                    f"plugin '{_info.name}': registered {type(obj).__name__} {obj!r:.60} "
                    "(expected an Instrument, a LazyInstrument or the path of an instrument.yaml)"
                )
                return
            entry: Instrument | _Deferred
            if isinstance(obj, Instrument):
                task, entry = obj.id, replace(obj, plugin=_info)
            elif isinstance(obj, LazyInstrument):
                if not (isinstance(obj.id, str) and obj.id and callable(obj.build)):
                    table.failures.append(
                        f"plugin '{_info.name}': LazyInstrument({obj.id!r:.60}) needs a task id "
                        "and a callable that builds the instrument"
                    )
                    return
                task, entry = obj.id, _Deferred(_info, obj.build)
            else:
                try:
                    inst = spec.load_instrument(obj)
                except SpecError as exc:
                    table.failures.append(f"plugin '{_info.name}': {exc}")
                    return
                task, entry = inst.id, replace(inst, plugin=_info)
            if task in table:
                swap, message = _clash("task id", task, table.owner(task), _info.name)
                table.failures.append(message)
                if not swap:
                    return
            table.put(task, entry)

        _call_hook(impl, "register_instruments", register, table.failures.append)
    return table


def build_backends(
    pm: pluggy.PluginManager, records: Sequence[PluginRecord]
) -> dict[str, BackendEntry]:
    """Every registered backend factory by name."""
    found: dict[str, BackendEntry] = {}
    for impl in _each_impl(pm, "register_backends"):
        info = plugin_info(records, impl.plugin_name)

        def register(
            name: str,
            factory: Callable[[dict[str, str]], Backend],
            description: str = "",
            args: object = (),
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
            helps = _arg_help(args)
            if args and not helps:
                _warn(
                    f"plugin '{_info.name}': register_backends args of {name!r:.40} should be "
                    "(key, help) pairs or a mapping; its --model-args are not listed"
                )
            found[name] = BackendEntry(name, factory, str(description), _info, helps)

        _call_hook(impl, "register_backends", register, _warn)
    return found


def _arg_help(args: object) -> tuple[tuple[str, str], ...]:
    """``args`` of ``register(..., args=...)`` (a mapping or pairs of key and help) as pairs;
    anything malformed is dropped rather than failing the registration."""
    pairs = args.items() if isinstance(args, dict) else args
    if not isinstance(pairs, Iterable) or isinstance(pairs, str | bytes):
        return ()
    try:
        return tuple((str(k)[:100], str(v)[:300]) for k, v in pairs)
    except (TypeError, ValueError):
        return ()


def build_parsers(pm: pluggy.PluginManager) -> dict[str, Parser]:
    """Every registered response parser by name."""
    found: dict[str, Parser] = {}
    owners: dict[str, str] = {}
    for impl in _each_impl(pm, "register_parsers"):

        def register(
            name: str,
            function: Parser,
            _plugin: str = impl.plugin_name,
        ) -> None:
            if not isinstance(name, str) or not name or not callable(function):
                _warn(
                    f"plugin '{_plugin}': register_parsers registered {name!r:.40} with "
                    f"{type(function).__name__} (expected a name and a function); skipped"
                )
                return
            if _kept_first("parser", name, owners, _plugin):
                return
            found[name] = function

        _call_hook(impl, "register_parsers", register, _warn)
    return found


@dataclass(frozen=True)
class ConditionEntry:
    """A registered condition factory: ``factory(argument or None) -> Condition``."""

    name: str
    factory: Callable[[str | None], Condition]
    description: str
    facet: str
    takes_argument: bool
    plugin: str = ""


def build_conditions(pm: pluggy.PluginManager) -> dict[str, ConditionEntry]:
    """Every registered administration condition by name (``ConditionEntry`` values)."""
    found: dict[str, ConditionEntry] = {}
    for impl in _each_impl(pm, "register_conditions"):

        def register(
            name: str,
            factory: Callable[[str | None], Condition],
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


def build_kinds(pm: pluggy.PluginManager) -> dict[str, TaskKind]:
    """Every registered task kind by name (``contracts.TaskKind`` objects)."""
    found: dict[str, TaskKind] = {}
    owners: dict[str, str] = {}
    for impl in _each_impl(pm, "register_task_kinds"):

        def register(name: str, kind: TaskKind, _plugin: str = impl.plugin_name) -> None:
            if not isinstance(name, str) or not name:
                _warn(f"plugin '{_plugin}': register_task_kinds registered {name!r:.40}; skipped")
                return
            if _kept_first("task kind", name, owners, _plugin):
                return
            found[name] = kind

        _call_hook(impl, "register_task_kinds", register, _warn)
    return found


@dataclass(frozen=True)
class AdministrationEntry:
    """A registered administration mode and the plugin that registered it."""

    name: str
    mode: Administration
    description: str
    plugin: str


def build_administrations(pm: pluggy.PluginManager) -> dict[str, AdministrationEntry]:
    """Every registered administration mode by name (``contracts.Administration`` objects)."""
    found: dict[str, AdministrationEntry] = {}
    for impl in _each_impl(pm, "register_administrations"):

        def register(
            name: str, mode: Administration, description: str = "", _plugin: str = impl.plugin_name
        ) -> None:
            if not isinstance(name, str) or not name or not isinstance(mode, Administration):
                _warn(
                    f"plugin '{_plugin}': register_administrations registered {name!r:.40} with "
                    f"{type(mode).__name__} (expected a name and an Administration); skipped"
                )
                return
            if name in found:
                swap, message = _clash("administration", name, found[name].plugin, _plugin)
                _warn(message)
                if not swap:
                    return
            found[name] = AdministrationEntry(name, mode, str(description), _plugin)

        _call_hook(impl, "register_administrations", register, _warn)
    return found


@dataclass(frozen=True)
class AnalysisEntry:
    """A registered ``psym analyze`` analysis and the plugin that registered it.

    ``target`` is the analysis function, or a ``"module:function"`` reference to it that is
    imported when the analysis first runs (registering then imports nothing heavy).
    """

    name: str
    target: Analysis | str
    description: str
    plugin: str

    @property
    def builtin(self) -> bool:
        """Whether the core registered it (its failures are the core's bugs, not contained)."""
        return _builtin(self.plugin)

    def function(self) -> Analysis:
        """The analysis function (a reference is imported now: ImportError or AttributeError
        as raised, TypeError when it names no function)."""
        if not isinstance(self.target, str):
            return self.target
        module, _, attr = self.target.partition(":")
        found: Analysis = getattr(importlib.import_module(module), attr)
        if not callable(found):
            raise TypeError(f"{self.target} is {type(found).__name__}, not a function")
        return found


def _analysis_target(target: object) -> bool:
    """A function, or a ``"module:function"`` reference."""
    if isinstance(target, str):
        module, sep, attr = target.partition(":")
        return bool(sep and module and attr.isidentifier())
    return callable(target)


def build_analyses(pm: pluggy.PluginManager) -> dict[str, AnalysisEntry]:
    """Every registered analysis by name, in the order ``psym analyze`` runs them: the hooks'
    call order (the core's first, the plugins' next, the core's ``trylast`` ones last)."""
    found: dict[str, AnalysisEntry] = {}
    for impl in _each_impl(pm, "register_analyses"):

        def register(
            name: str,
            analyse: Analysis | str,
            description: str = "",
            _plugin: str = impl.plugin_name,
        ) -> None:
            if not isinstance(name, str) or not name or not _analysis_target(analyse):
                what = (
                    f"str {analyse!r:.60}" if isinstance(analyse, str) else type(analyse).__name__
                )
                _warn(
                    f"plugin '{_plugin}': register_analyses registered {name!r:.40} with {what} "
                    "(expected a name and a function or a 'module:function' reference); skipped"
                )
                return
            if name in found:
                swap, message = _clash("analysis", name, found[name].plugin, _plugin)
                _warn(message)
                if not swap:
                    return
                del found[name]  # the kept entry runs where its own registration puts it
            found[name] = AnalysisEntry(name, analyse, str(description), _plugin)

        _call_hook(impl, "register_analyses", register, _warn)
    return found
