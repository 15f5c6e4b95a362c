"""Name the third-party plugin whose hook raised during a run, in one line.

``hook_failure(session, exc)`` walks the traceback of ``exc`` for the first frame that runs code
of a plugin registered in ``session`` that is not part of psymetrics_core, and returns a
``PsymError`` naming the plugin, its distribution and the hook (the function pluggy or the task
kind called). It returns None when no third-party plugin code is on the traceback (a bug of the
core itself, which should keep its traceback).

Outside a run (``psym show``, ``score``, ``analyze``, ``validity``, ``export``, a plugin's own
command), ``plugin_error(exc, session)`` does the same; ``psym``'s command group
turns what it returns into one ``psym: error:`` line, and commands that go over every installed
instrument (``psym export lm-eval``) skip the failing one with that line as the reason.
"""

from __future__ import annotations

import importlib.metadata as md
import sys
from types import TracebackType
from typing import Any

from psymetrics_core.base.errors import PsymError

__all__ = ["hook_failure", "plugin_error", "PluginHookError"]

RUN_STOPPED = "the run stopped (responses received so far are kept in the cache and samples.jsonl)"


class PluginHookError(PsymError):
    """A third-party plugin's hook raised; the message names the plugin, distribution, hook."""


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


def _distribution(module: str, name: str, session: Any) -> str:
    for rec in getattr(session, "records", None) or []:  # the entry point's own distribution
        if rec.name == name and rec.distribution:
            return f"{rec.distribution} {rec.version}" if rec.version else str(rec.distribution)

    names = md.packages_distributions().get(module.split(".")[0], [])
    if not names:
        return "no installed distribution"
    try:
        return f"{names[0]} {md.version(names[0])}"
    except md.PackageNotFoundError:
        return names[0]


def hook_failure(
    session: Any, exc: BaseException, consequence: str | None = RUN_STOPPED
) -> PluginHookError | None:
    """A one-line ``PsymError`` for ``exc`` raised in third-party plugin code, else None.

    ``consequence`` ends the line (default: what happened to the run; None: nothing).
    """
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
                tail = f"; {consequence}" if consequence else ""
                dist = _distribution(module, name, session)
                return PluginHookError(
                    f"plugin '{name}' ({dist}) failed in its {hook} hook: {reason}{tail}"
                )
        tb = tb.tb_next
    return None


def plugin_error(exc: BaseException, session: Any) -> PluginHookError | None:
    """``hook_failure`` outside a run, on the plugins of ``session``: no run note.

    None when ``exc`` is a ``PsymError`` already, is not an ``Exception`` (Ctrl-C, exit), or
    came from no third-party plugin's code.
    """
    if isinstance(exc, PsymError) or not isinstance(exc, Exception):
        return None
    return hook_failure(session, exc, consequence=None)
