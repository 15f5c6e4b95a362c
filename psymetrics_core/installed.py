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
from importlib import import_module
from pathlib import Path
from typing import Any, NamedTuple

from .stat_memo import read_memo, stamp, write_memo

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
    memo, fresh = _memo()
    known = memo["groups"].get(group)
    if not (fresh and _entries_ok(known) and _unchanged(memo, known["files"])):
        from importlib import metadata

        entries, files = [], []
        for ep in sorted(metadata.entry_points(group=group), key=lambda e: e.name):
            meta = ep.dist.metadata if ep.dist is not None else None  # parsed once: it is slow
            entries.append([ep.name, ep.value, *_name_version(meta)])
            files += _files_of(ep.dist, "entry_points.txt", "METADATA")
        known = {"entries": entries, "files": files}
        memo["groups"][group] = known
        _keep(memo, files)
    return [PluginEntry(*e) for e in known["entries"]]


def version(distribution: str) -> str:
    """The installed version of ``distribution`` (``importlib.metadata.PackageNotFoundError``
    when it is not installed)."""
    return versions([distribution])[distribution]


def versions(distributions: Sequence[str]) -> dict[str, str]:
    """The installed version of each of ``distributions`` (one look at the memo for all;
    ``importlib.metadata.PackageNotFoundError`` for one that is not installed)."""
    memo, fresh = _memo()
    out: dict[str, str] = {}
    missing = []
    for name in distributions:
        known = memo["versions"].get(name)
        if (
            fresh
            and isinstance(known, dict)
            and isinstance(known.get("version"), str)
            and _unchanged(memo, known.get("files"))
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
            memo["versions"][name] = {"version": dist.version, "files": found}
            out[name] = dist.version
            files += found
        _keep(memo, files)
    return {name: out[name] for name in distributions}


def load_entry(value: str) -> Any:
    """The object an entry point's ``module:attr.attr`` value names (imports the module)."""
    module, _, attrs = value.partition(":")
    obj = import_module(module.strip())
    for attr in filter(None, attrs.strip().split(".")):
        obj = getattr(obj, attr)
    return obj


def _memo() -> tuple[dict[str, Any], bool]:
    """This installation's part of the memo, and whether it was found (else an empty one)."""
    fingerprint = _fingerprint()
    kept = read_memo(_MEMO)
    installs = kept.get("installs") if kept.get("format") == _FORMAT else None
    memo = installs.get(fingerprint) if isinstance(installs, dict) else None
    if (
        isinstance(memo, dict)
        and isinstance(memo.get("groups"), dict)
        and isinstance(memo.get("versions"), dict)
        and isinstance(memo.get("stamps"), dict)
    ):
        return {**memo, "fingerprint": fingerprint}, True
    return {"fingerprint": fingerprint, "groups": {}, "versions": {}, "stamps": {}}, False


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


def _unchanged(memo: dict[str, Any], files: Any) -> bool:
    """Whether every file an answer was read from keeps the stamp the memo holds for it."""
    if not isinstance(files, list):
        return False
    try:
        return all(stamp(Path(f)) == memo["stamps"][f] for f in files)
    except (OSError, KeyError, TypeError, ValueError):
        return False


def _keep(memo: dict[str, Any], files: list[str]) -> None:
    """Write the memo with the stamps of ``files`` (an answer's sources)."""
    for f in files:
        try:
            memo["stamps"][f] = stamp(Path(f))
        except OSError:
            memo["stamps"].pop(f, None)  # gone already: the answer is not trusted next time
    kept = read_memo(_MEMO)  # other installations' parts, as another process may have left them
    installs = kept.get("installs") if kept.get("format") == _FORMAT else None
    others = installs if isinstance(installs, dict) else {}
    others = {k: v for k, v in others.items() if k != memo["fingerprint"]}
    mine = {k: v for k, v in memo.items() if k != "fingerprint"}
    kept_now = [*list(others.items())[: _KEPT - 1], (memo["fingerprint"], mine)]
    write_memo(_MEMO, {"format": _FORMAT, "installs": dict(kept_now)})


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
