"""Building a plugin manager: entry-point discovery that reports and skips broken plugins.

This module holds no state; a ``pluginsys.session.Session`` owns the manager it builds.

Environment variables:

- ``PSYM_LOAD_PLUGINS``: comma-separated allow-list of entry-point names (``""`` loads none).
- ``PSYM_DISABLE_PLUGINS``: comma-separated block-list of entry-point names.
- ``PSYM_STRICT_PLUGINS=1``: a plugin that fails to load is an error instead of a warning.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata

import pluggy

from psymetrics_core.base.errors import PluginLoadError
from psymetrics_core.base.versions import __version__
from psymetrics_core.pluginsys import hookspecs

__all__ = [
    "ENTRY_POINT_GROUP",
    "DEFAULT_PLUGINS",
    "PluginRecord",
    "make_plugin_manager",
]

ENTRY_POINT_GROUP = "psymetrics"

# Internal plugins, registered after external ones; their pipeline impls are trylast.
DEFAULT_PLUGINS = (
    "psymetrics_core.pluginsys.defaults.items",
    "psymetrics_core.pluginsys.defaults.render",
    "psymetrics_core.pluginsys.defaults.parse",
    "psymetrics_core.pluginsys.defaults.score",
    "psymetrics_core.pluginsys.defaults.aggregate",
    "psymetrics_core.pluginsys.defaults.backends",
    "psymetrics_core.administer.conditions.builtin",
    "psymetrics_core.administer.kinds.builtin",
    "psymetrics_core.administer.administration.builtin",
    "psymetrics_core.analysis.builtin",
    "psymetrics_core.pluginsys.defaults.local",
)


@dataclass
class PluginRecord:
    """What happened to one entry point: loaded, failed (with the reason) or blocked."""

    name: str
    distribution: str | None
    version: str | None
    status: str  # "ok", "failed", "blocked", "builtin"
    error: str | None = None


def _env_list(name: str) -> list[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return [p.strip() for p in raw.split(",") if p.strip()]


def _warn(message: str) -> None:
    print(f"psym: {message}", file=sys.stderr)


def make_plugin_manager(
    *, autoload: bool = True
) -> tuple[pluggy.PluginManager, list[PluginRecord]]:
    """Build a plugin manager with the core defaults and (if ``autoload``) installed plugins.

    Returns the manager and one ``PluginRecord`` per plugin considered.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    records: list[PluginRecord] = []
    if autoload:
        records.extend(_load_entry_points(pm))
    for modname in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(modname), name=modname)
        records.append(PluginRecord(modname, "psymetrics-core", _core_version(), "builtin"))
    return pm, records


def _core_version() -> str:
    return __version__


def plugin_versions(records: Sequence[PluginRecord]) -> dict[str, dict[str, str | None]]:
    """Name -> distribution, version and status of every plugin that is not built in (what a
    run record's ``plugins`` lists)."""
    return {
        r.name: {"distribution": r.distribution, "version": r.version, "status": r.status}
        for r in records
        if r.status != "builtin"
    }


def _load_entry_points(pm: pluggy.PluginManager) -> list[PluginRecord]:
    strict = os.environ.get("PSYM_STRICT_PLUGINS", "") not in ("", "0")
    allow = _env_list("PSYM_LOAD_PLUGINS")
    block = set(_env_list("PSYM_DISABLE_PLUGINS") or [])
    records: list[PluginRecord] = []
    seen: set[str] = set()
    # sorted by name; of two entry points with one name, the first on ``sys.path`` counts
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in seen:
            continue
        seen.add(ep.name)
        meta = ep.dist.metadata if ep.dist is not None else None  # parsed once: it is slow
        dist, version = (meta["Name"], meta["Version"]) if meta is not None else (None, None)
        if ep.name in block or (allow is not None and ep.name not in allow):
            records.append(PluginRecord(ep.name, dist, version, "blocked"))
            continue
        try:
            obj = ep.load()
            pm.register(obj, name=ep.name)
            pm.check_pending()
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # contained, reported below
            if pm.get_plugin(ep.name) is not None:
                pm.unregister(name=ep.name)
            reason = (
                f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            ).splitlines()[0]
            if strict:
                raise PluginLoadError(
                    f"plugin '{ep.name}' ({dist} {version}) failed to load: {reason}"
                ) from exc
            _warn(
                f"skipped plugin '{ep.name}' ({dist} {version}): {reason} "
                "(set PSYM_STRICT_PLUGINS=1 to make this an error)"
            )
            records.append(PluginRecord(ep.name, dist, version, "failed", reason))
            continue
        records.append(PluginRecord(ep.name, dist, version, "ok"))
    if allow:
        for name in sorted(set(allow) - seen):
            _warn(f"PSYM_LOAD_PLUGINS names '{name}', but no installed plugin has that name")
    return records
