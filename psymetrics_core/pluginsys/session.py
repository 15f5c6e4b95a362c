"""The session: one plugin manager and every registry built from it.

A ``Session`` is handed down, never looked up: whoever starts the work builds one and passes
it on (``psym`` builds one per command invocation, ``psymetrics_core.evaluate`` and the other
library functions take ``session=`` and build a fresh one when none is given, the lm-eval
export runtime builds its own). ``Session()`` loads the installed plugins; tests and embedding
applications build ``Session(pm, records)`` from ``loader.make_plugin_manager(autoload=False)``.
No registry is global: registering a plugin on one session never changes another.

Look-ups: ``get_instrument(task)``, ``instruments()``, ``task_ids()``,
``registration_failures()``, ``backends()``, ``make_backend(model, args)``, ``parsers()``,
``conditions()``, ``kinds()``, ``kind_of(instrument)``, ``administrations()``,
``administration(name)``, ``analyses()``; ``pm`` / ``hook`` / ``records`` are the
plugin manager, its hooks and the load record of every plugin considered.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import TypeVar, cast

import pluggy

from psymetrics_core.backends.base import Backend, parse_model_args
from psymetrics_core.base.errors import BackendError, PsymError, UnknownTaskError
from psymetrics_core.base.types import Instrument
from psymetrics_core.contracts.administration import Administration
from psymetrics_core.contracts.kinds import Parser, TaskKind
from psymetrics_core.pluginsys.backend_hints import install_hint
from psymetrics_core.pluginsys.loader import PluginRecord, make_plugin_manager
from psymetrics_core.pluginsys.registries import (
    AdministrationEntry,
    AnalysisEntry,
    BackendEntry,
    ConditionEntry,
    InstrumentTable,
    build_administrations,
    build_analyses,
    build_backends,
    build_conditions,
    build_instruments,
    build_kinds,
    build_parsers,
)

__all__ = ["Session"]

_T = TypeVar("_T")


class Session:
    """A plugin manager, its load records and the registries built from it (lazily, once)."""

    def __init__(
        self,
        pm: pluggy.PluginManager | None = None,
        records: list[PluginRecord] | None = None,
        *,
        autoload: bool = True,
    ) -> None:
        if pm is None:
            pm, records = make_plugin_manager(autoload=autoload)
        self.pm = pm
        self.records: list[PluginRecord] = list(records or [])
        self._cache: dict[str, object] = {}

    @property
    def hook(self) -> pluggy.HookRelay:
        """The pipeline and registration hooks of this session's plugins."""
        return self.pm.hook

    def register(self, plugin: object, name: str | None = None) -> None:
        """Add ``plugin`` to this session (its registries are rebuilt on next use)."""
        self.pm.register(plugin, name=name)
        self.pm.check_pending()
        self._cache.clear()

    def refresh(self) -> None:
        """Forget the built registries (they are rebuilt from the plugins on next use)."""
        self._cache.clear()

    def _get(self, key: str, build: Callable[[], _T]) -> _T:
        if key not in self._cache:
            self._cache[key] = build()
        return cast(_T, self._cache[key])  # what ``build`` returned for ``key``

    def _instrument_table(self) -> InstrumentTable:
        return self._get("instruments", lambda: build_instruments(self.pm, self.records))

    def instruments(self) -> dict[str, Instrument]:
        """Every registered instrument by task id (invalid specs are reported and skipped)."""
        return self._instrument_table().load_all()

    def task_ids(self) -> list[str]:
        """Every registered task id, without parsing the specs not parsed yet."""
        return self._instrument_table().ids()

    def registration_failures(self) -> list[str]:
        """One-line messages for instruments that failed validation at registration."""
        table = self._instrument_table()
        table.load_all()
        return table.failures

    def task_id(self, task: str) -> str:
        """The registered id ``task`` names: itself, or the one id equal to it but for case
        (``MFQ`` -> ``mfq``); else an error listing the close matches (case ignored)."""
        table = self._instrument_table()
        if task in table:
            return task
        same = [t for t in table.ids() if t.casefold() == task.casefold()]
        if len(same) == 1:
            return same[0]
        raise self._unknown_task(task)

    def get_instrument(self, task: str) -> Instrument:
        """The instrument registered as ``task`` (case ignored where one id matches; a lazy one
        built now if it was not yet), or an error listing the close matches."""
        return self._instrument_table().get(self.task_id(task))

    def _unknown_task(self, task: str) -> UnknownTaskError:
        table = self._instrument_table()
        known = list(table.load_all())  # a lazy task that fails to build is not offered
        by_folded = {t.casefold(): t for t in known}
        close = [by_folded[c] for c in difflib.get_close_matches(task.casefold(), by_folded, n=3)]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        failed = [r.name for r in self.records if r.status == "failed"]
        failed_hint = f"; plugins that failed to load: {', '.join(failed)}" if failed else ""
        return UnknownTaskError(
            f"unknown task '{task}'{hint} (installed: {', '.join(sorted(known)) or 'none'})"
            f"{failed_hint}"
        )

    def backends(self) -> dict[str, BackendEntry]:
        """Every registered backend factory by name."""
        return self._get("backends", lambda: build_backends(self.pm, self.records))

    def parsers(self) -> dict[str, Parser]:
        """Every registered response parser by name."""
        return self._get("parsers", lambda: build_parsers(self.pm))

    def conditions(self) -> dict[str, ConditionEntry]:
        """Every registered administration condition by name."""
        return self._get("conditions", lambda: build_conditions(self.pm))

    def kinds(self) -> dict[str, TaskKind]:
        """Every registered task kind by name."""
        return self._get("kinds", lambda: build_kinds(self.pm))

    def administrations(self) -> dict[str, AdministrationEntry]:
        """Every registered administration mode by name (``item-by-item``, ``battery`` ...)."""
        return self._get("administrations", lambda: build_administrations(self.pm))

    def administration(self, name: str) -> Administration:
        """The administration mode registered as ``name`` (an unknown one is a one-line
        error naming the registered modes)."""
        modes = self.administrations()
        if name not in modes:
            raise PsymError(
                f"administration '{name}' is provided by no installed plugin "
                f"(administrations: {', '.join(sorted(modes))})"
            )
        return modes[name].mode

    def analyses(self) -> dict[str, AnalysisEntry]:
        """Every registered ``psym analyze`` analysis by name, the core's (per-run tables,
        ecological validity, population psychometrics) and the plugins', in the order they
        run."""
        return self._get("analyses", lambda: build_analyses(self.pm))

    def kind_of(self, inst: Instrument) -> TaskKind:
        """The ``TaskKind`` that runs ``inst`` (an unknown kind is a one-line error)."""
        kinds = self.kinds()
        if inst.kind not in kinds:
            raise PsymError(
                f"task '{inst.id}' is of kind '{inst.kind}', which no installed plugin provides "
                f"(kinds: {', '.join(sorted(kinds))})"
            )
        return kinds[inst.kind]

    def make_backend(self, model: str, model_args: str | dict[str, str] | None = None) -> Backend:
        """Build the backend registered as ``model`` with lm-eval style ``model_args``."""
        args = model_args if isinstance(model_args, dict) else parse_model_args(model_args)
        entries = self.backends()
        base, sep, variant = model.partition(":")
        if model not in entries and sep and base in entries:  # e.g. lm-eval:hf
            return entries[base].factory({**args, "variant": variant})
        if model not in entries:
            raise BackendError(install_hint(model, self.records) or unknown_backend(model, entries))
        return entries[model].factory(args)


def unknown_backend(model: str, entries: Mapping[str, BackendEntry]) -> str:
    """The one-line error for a ``--model`` no plugin registers: the closest backend name, and
    for what looks like a model name (``gpt-4o``, ``llama3.1``) the ``openai-chat`` form."""
    names = sorted(entries)
    close = difflib.get_close_matches(model, names, n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    if not close and "openai-chat" in entries:
        hint = (
            f"; a model served over an API is given as --model openai-chat --model-args "
            f"base_url=URL,model={model}"
        )
    return (
        f"unknown model backend '{model}' (available: {', '.join(names)}; "
        f"psym plugins --backends lists their --model-args){hint}"
    )
