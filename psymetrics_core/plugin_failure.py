"""Name the third-party plugin whose hook raised during a run, in one line.

``hook_failure(session, exc)`` walks the traceback of ``exc`` for the first frame that runs code
of a plugin registered in ``session`` that is not part of psymetrics_core, and returns a
``PsymError`` naming the plugin, its distribution and the hook (the function pluggy or the task
kind called). It returns None when no third-party plugin code is on the traceback (a bug of the
core itself, which should keep its traceback).
"""

from __future__ import annotations

import importlib.metadata as md
import sys
from types import TracebackType
from typing import Any

from .errors import PsymError

__all__ = ["hook_failure"]


def _plugin_modules(session: Any) -> dict[str, str]:
    """Module name -> registered plugin name, for every plugin outside psymetrics_core."""
    found: dict[str, str] = {}
    for name, plugin in session.pm.list_name_plugin():
        if plugin is None:
            continue
        module = getattr(plugin, "__name__", None) if isinstance(plugin, type(sys)) else None
        module = module or type(plugin).__module__
        if module.split(".")[0] == "psymetrics_core":
            continue
        found[module] = name
    return found


def _owner(module: str, plugins: dict[str, str]) -> str | None:
    for mod, name in plugins.items():
        if module == mod or module.startswith(mod + ".") or mod.startswith(module + "."):
            return name
    top = module.split(".")[0]
    for mod, name in plugins.items():
        if mod.split(".")[0] == top:
            return name
    return None


def _distribution(module: str) -> str:
    names = md.packages_distributions().get(module.split(".")[0], [])
    if not names:
        return "no installed distribution"
    try:
        return f"{names[0]} {md.version(names[0])}"
    except md.PackageNotFoundError:
        return names[0]


def hook_failure(session: Any, exc: BaseException) -> PsymError | None:
    """A one-line ``PsymError`` for ``exc`` raised in third-party plugin code, else None."""
    plugins = _plugin_modules(session)
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        module = str(frame.f_globals.get("__name__", ""))
        if module and module.split(".")[0] != "psymetrics_core":
            name = _owner(module, plugins)
            if name is not None:
                hook = frame.f_code.co_name
                reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
                return PsymError(
                    f"plugin '{name}' ({_distribution(module)}) failed in its {hook} hook: "
                    f"{reason}; the run stopped (responses received so far are kept in the "
                    "cache and samples.jsonl)"
                )
        tb = tb.tb_next
    return None
