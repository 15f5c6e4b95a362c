"""Old module paths of psymetrics_core that still import, with one DeprecationWarning each.

Issue 23 moved the flat modules into layered subpackages. A published plugin written against the
old paths (``from psymetrics_core.types import Item``) keeps working: ``install()`` (called by
``psymetrics_core/__init__``) appends a finder to ``sys.meta_path`` that, for an old name only,
imports the new module, registers that very module object under the old name too (so classes,
``isinstance`` and pickles are the same) and warns once, naming the new path. The finder runs
first (a submodule of an aliased package must not load a second time from the package's folder)
but steps aside for any module that exists under the old name.

``MOVED`` maps old to new module names relative to ``psymetrics_core``; a submodule of a moved
package follows its package (``kinds.task`` -> ``administer.kinds.task``). ``REMOVED`` names
packages that are gone (importing one gives an empty package so its moved children still
import); ``GONE`` names modules whose concept went (a facade, a memo): importing one is an
``ImportError`` saying what replaced it. ``LEFT`` names modules that left the core for a
plugin distribution: they import from the plugin when it is installed, else fail with one line
naming the distribution.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from collections.abc import Sequence

PKG = "psymetrics_core"

MOVED: dict[str, str] = {
    # base: imports nothing else of psymetrics
    "errors": "base.errors",
    "types": "base.types",
    "redaction": "base.redaction",
    "safe_io": "base.reading",
    "safe_yaml": "base.reading",
    "input_errors": "base.reading",
    "base.safe_io": "base.reading",
    "base.safe_yaml": "base.reading",
    "base.input_errors": "base.reading",
    "records.version": "base.versions",
    "records.base": "base.models",
    # instruments
    "spec": "instruments.spec",
    "records.instrument": "instruments.schema",
    "spec_scoring": "instruments.scoring",
    "norms": "instruments.norms",
    "indicators": "instruments.indicators",
    "item_texts": "instruments.item_texts",
    "importers.psychobench": "instruments.psychobench",
    # records
    "results": "records.writer",
    "rundir": "records.rundir",
    "provenance": "records.provenance",
    # backends
    "cache": "backends.cache",
    "cache_io": "backends.cache_transfer",
    # pluginsys
    "hookspecs": "pluginsys.hookspecs",
    "session": "pluginsys.session",
    "plugin_loader": "pluginsys.loader",
    "plugin_failure": "pluginsys.failures",
    "registries": "pluginsys.registries",
    "catalogue": "pluginsys.catalogue",
    "plugin_kit": "pluginsys.kit",
    "default_plugins": "pluginsys.defaults",
    # administer
    "runner": "administer.runner",
    "scheduler": "administer.scheduler",
    "judge": "administer.judge",
    "task_options": "administer.options",
    "preflight": "administer.preflight",
    "responses": "administer.answers",
    "generations": "administer.generations",
    "conditions": "administer.conditions",
    "kinds": "administer.kinds",
    # study
    "plan": "study.plan",
    "shard": "study.shard",
    "merge": "study.merge",
    "executor": "study.executor",
    "batch": "study.batch",
    # analysis, export
    "validity": "analysis.ecological",
    "validity_plot": "analysis.ecological_plot",
    "analysis_sections": "analysis.sections",
    "tidy": "export.tidy",
}

# facades and memos whose concept is gone: importing one is an ImportError saying what replaced it
GONE: dict[str, str] = {
    "registry": "a Session is handed down now: psymetrics_core.pluginsys.session.Session() "
    "and its get_instrument(), instruments(), backends(), parsers() ...",
    "plugins": "a Session is handed down now: Session().pm is the plugin manager, "
    "Session().records the load records (psymetrics_core.pluginsys.session)",
    "installed": "plugins are found with importlib.metadata.entry_points(group='psymetrics')",
    "spec_memo": "specs are validated on every load (psymetrics_core.instruments.spec)",
}

REMOVED: dict[str, str] = {
    "importers": "its psychobench module is psymetrics_core.instruments.psychobench",
}

# modules that left the core for a plugin distribution: old name -> (module, distribution)
LEFT: dict[str, tuple[str, str]] = {
    "backends.hf": ("psymetrics_plugin_hf.hf", "psymetrics-plugin-hf"),
    "backends.hf_fast": ("psymetrics_plugin_hf.hf_fast", "psymetrics-plugin-hf"),
    "backends.hf_vision": ("psymetrics_plugin_hf.hf_vision", "psymetrics-plugin-hf"),
    "backends.local_model": ("psymetrics_plugin_hf.local_model", "psymetrics-plugin-hf"),
    "backends.native_llama": (
        "psymetrics_plugin_llama_engine.native_llama",
        "psymetrics-plugin-llama-engine",
    ),
    "backends.onnx_llama": (
        "psymetrics_plugin_llama_engine.onnx_llama",
        "psymetrics-plugin-llama-engine",
    ),
}


def new_name(old: str) -> str | None:
    """The module that ``old`` (a full dotted name) is now, or None when it is not an old name.

    A moved package carries its submodules along: the longest moved prefix wins.
    """
    if not old.startswith(PKG + "."):
        return None
    rel = old[len(PKG) + 1 :]
    if rel in LEFT:
        return LEFT[rel][0]
    head, rest = rel, ""
    while head:
        if head in MOVED:
            return f"{PKG}.{MOVED[head]}{rest}"
        head, dot, tail = head.rpartition(".")
        rest = f".{tail}{rest}" if dot else rest
    return None


def message(old: str, new: str) -> str:
    """The one warning for ``old``: where to import it from now."""
    return f"{old} moved to {new}; import it from there (the old path will be removed)"


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module it became (the same object, registered twice)."""

    def __init__(self, new: str | None, why: str) -> None:
        self.new = new
        self.why = why

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # a throwaway module; exec_module puts the real one in its place

    def exec_module(self, module: types.ModuleType) -> None:
        old = module.__name__
        if self.new is None:  # a removed package: an empty package so moved children import
            module.__path__ = []
            module.__doc__ = f"Removed: {self.why}."
            warnings.warn(f"{old} is removed; {self.why}", DeprecationWarning, stacklevel=2)
            return
        target = self._target(old, self.new)
        sys.modules[old] = target  # importlib returns what is in sys.modules under the old name
        warnings.warn(message(old, self.new), DeprecationWarning, stacklevel=2)

    def _target(self, old: str, new: str) -> types.ModuleType:
        try:
            return importlib.import_module(new)
        except ModuleNotFoundError as exc:
            rel = old[len(PKG) + 1 :]
            if rel in LEFT and exc.name is not None and new.startswith(exc.name):
                raise ModuleNotFoundError(
                    f"{old} left psymetrics-core: pip install {LEFT[rel][1]} (then import {new})",
                    name=old,
                ) from None
            raise


class _Finder(importlib.abc.MetaPathFinder):
    """Finds old psymetrics_core module names (and nothing else)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        rel = fullname[len(PKG) + 1 :] if fullname.startswith(PKG + ".") else ""
        if rel in GONE:
            raise ImportError(f"{fullname} is gone: {GONE[rel]}", name=fullname)
        new = new_name(fullname)
        if (rel not in REMOVED and new is None) or _exists(fullname, path):
            return None
        if rel in REMOVED:
            return importlib.util.spec_from_loader(
                fullname, _Alias(None, REMOVED[rel]), is_package=True
            )
        return importlib.util.spec_from_loader(fullname, _Alias(new, ""))


def _exists(fullname: str, path: Sequence[str] | None) -> bool:
    """Whether ``fullname`` is a real module: its parent is itself (not an alias of a moved
    package, whose folder holds the new modules) and the parent's folder has it (a file or a
    package; not a namespace left by a folder of stale ``__pycache__``)."""
    parent = sys.modules.get(fullname.rpartition(".")[0])
    if parent is None or parent.__name__ != fullname.rpartition(".")[0]:
        return False
    spec = importlib.machinery.PathFinder.find_spec(fullname, path)
    return spec is not None and spec.origin is not None


FINDER = _Finder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once per process)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, FINDER)
