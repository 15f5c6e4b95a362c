"""What is installed, remembered between processes: psymetrics' plugin entry points and the
versions of distributions, without ``importlib.metadata`` reading every installed
distribution's metadata in every process (its import and scan were a tenth of a cached re-run).

``installed.json`` in the cache directory answers while the installation is what it was when
the memo was written: the same ``sys.path``; in each of its directories the same distribution
folders (``*.dist-info``, ``*.egg-info``, eggs), each with the inode and modification time it had
(installing, upgrading, re-installing or removing a distribution creates or deletes folders);
and the same stamp on every metadata file an answer was read from (a plugin's
``entry_points.txt`` and ``METADATA``). Anything else is answered by ``importlib.metadata`` and
the memo rewritten; a damaged memo is an empty one. Not seen: a hand edit, inside an unchanged
folder, that adds a ``psymetrics`` entry point to a distribution that had none.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any, NamedTuple

from psymetrics_core.base.stat_memo import read_memo, stamp, write_memo

__all__ = ["PluginEntry", "plugin_entries", "version", "versions", "load_entry"]

_MEMO = "installed.json"
_FORMAT = 2
_KEPT = 8  # installations (interpreters, sys.path orders) remembered at most


class PluginEntry(NamedTuple):
    """One entry point: its name, ``module:attribute`` value, distribution and version."""

    name: str
    value: str
    distribution: str | None
    version: str | None


def plugin_entries(group: str) -> list[PluginEntry]:
    """The entry points of ``group`` in the order ``importlib.metadata`` finds them, sorted
    by name (the first of a name is the one ``sys.path`` puts first)."""
    memo = _memo()
    known: Any = memo.groups.get(group)
    if not (_entries_ok(known) and memo.unchanged(known["files"])):
        from importlib import metadata

        entries, files = [], []
        for ep in sorted(metadata.entry_points(group=group), key=lambda e: e.name):
            meta = ep.dist.metadata if ep.dist is not None else None  # parsed once: it is slow
            entries.append([ep.name, ep.value, *_name_version(meta)])
            files += _files_of(ep.dist, "entry_points.txt", "METADATA")
        known = {"entries": entries, "files": files}
        memo.groups[group] = known
        memo.write(files)
    return [PluginEntry(*e) for e in known["entries"]]


def version(distribution: str) -> str:
    """The installed version of ``distribution`` (``importlib.metadata.PackageNotFoundError``
    when it is not installed)."""
    return versions([distribution])[distribution]


def versions(distributions: Sequence[str]) -> dict[str, str]:
    """The installed version of each of ``distributions`` (one look at the memo for all;
    ``importlib.metadata.PackageNotFoundError`` for one that is not installed)."""
    memo = _memo()
    out: dict[str, str] = {}
    missing = []
    for name in distributions:
        known = memo.versions.get(name)
        if (
            isinstance(known, dict)
            and isinstance(known.get("version"), str)
            and memo.unchanged(known.get("files"))
        ):
            out[name] = known["version"]
        else:
            missing.append(name)
    if missing:
        from importlib import metadata

        files = []
        for name in missing:
            dist = metadata.distribution(name)
            found = _files_of(dist, "METADATA")
            memo.versions[name] = {"version": dist.version, "files": found}
            out[name] = dist.version
            files += found
        memo.write(files)
    return {name: out[name] for name in distributions}


def load_entry(value: str) -> Any:
    """The object an entry point's ``module:attr.attr`` value names (imports the module)."""
    module, _, attrs = value.partition(":")
    obj = import_module(module.strip())
    for attr in filter(None, attrs.strip().split(".")):
        obj = getattr(obj, attr)
    return obj


@dataclass
class _Memo:
    """This installation's part of ``installed.json`` (empty when it had none, or a damaged
    one) and every installation's part as read, to write back beside it."""

    fingerprint: str
    installs: dict[str, Any]
    groups: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, Any] = field(default_factory=dict)
    stamps: dict[str, Any] = field(default_factory=dict)

    def unchanged(self, files: Any) -> bool:
        """Whether every file an answer was read from keeps the stamp held for it."""
        if not isinstance(files, list):
            return False
        try:
            return all(stamp(Path(f)) == self.stamps[f] for f in files)
        except (OSError, KeyError, TypeError, ValueError):
            return False

    def write(self, files: list[str]) -> None:
        """Write the memo back with the stamps of ``files`` (a new answer's sources); at
        most ``_KEPT`` installations are kept, this one among them."""
        for f in files:
            try:
                self.stamps[f] = stamp(Path(f))
            except OSError:
                self.stamps.pop(f, None)  # gone already: the answer is not trusted next time
        others = [(k, v) for k, v in self.installs.items() if k != self.fingerprint]
        mine = {"groups": self.groups, "versions": self.versions, "stamps": self.stamps}
        installs = dict([*others[: _KEPT - 1], (self.fingerprint, mine)])
        write_memo(_MEMO, {"format": _FORMAT, "installs": installs})


def _memo() -> _Memo:
    """The memo as read for this installation (``sys.path`` and its distributions)."""
    fingerprint = _fingerprint()
    kept = read_memo(_MEMO)
    installs = kept.get("installs") if kept.get("format") == _FORMAT else None
    if not isinstance(installs, dict):
        return _Memo(fingerprint, {})
    part = installs.get(fingerprint)
    if isinstance(part, dict) and all(
        isinstance(part.get(k), dict) for k in ("groups", "versions", "stamps")
    ):
        return _Memo(fingerprint, installs, part["groups"], part["versions"], part["stamps"])
    return _Memo(fingerprint, installs)


def _fingerprint() -> str:
    """A hash of ``sys.path`` and of the distribution folders in each directory on it."""
    h = hashlib.sha256()
    for entry in sys.path:
        h.update(f"\0{entry}\0".encode())
        try:
            with os.scandir(entry or ".") as it:
                folders = sorted(
                    (e.name, e.inode(), e.stat().st_mtime_ns)
                    for e in it
                    if e.name.endswith((".dist-info", ".egg-info", ".egg")) or e.name == "EGG-INFO"
                )
        except OSError:  # a zip file (its own stamp stands for its contents), or gone
            try:
                size, mtime, inode = stamp(Path(entry))
                folders = [(str(size), inode, mtime)]
            except OSError:
                folders = []
        h.update(repr(folders).encode())
    return h.hexdigest()


def _entries_ok(known: Any) -> bool:
    """Whether a memo's group entry has the shape this module writes."""
    if not isinstance(known, dict) or not isinstance(known.get("entries"), list):
        return False
    return all(
        isinstance(e, list)
        and len(e) == 4
        and all(isinstance(x, str) for x in e[:2])
        and all(x is None or isinstance(x, str) for x in e[2:])
        for e in known["entries"]
    )


def _files_of(dist: Any, *names: str) -> list[str]:
    """The metadata files ``names`` of ``dist`` that exist (a path distribution's folder)."""
    folder = getattr(dist, "_path", None)
    if folder is None:
        return []
    return [str(Path(folder) / n) for n in names if (Path(folder) / n).is_file()]


def _name_version(meta: Any) -> list[str | None]:
    if meta is None:
        return [None, None]
    return [meta["Name"], meta["Version"]]
