"""The catalogue of known plugins and installing from it.

The catalogue is read from ``PSYM_CATALOGUE`` when set, else from the copy that the build puts
inside this package (``psymetrics_core/pluginsys/plugins.yaml``, copied from its source
``registry/plugins.yaml`` by setup.py), else, in a source checkout or an editable install, from
the checkout's ``registry/plugins.yaml``; so it works from any directory. ``install`` uses
``sys.executable -m pip``: from ``plugins/<distribution>`` when this package runs from a source
checkout that has it (editable), else from the configured package index (``--index-url`` and
``--extra-index-url`` pass through to pip).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import load_yaml

__all__ = ["CatalogueEntry", "catalogue", "catalogue_path", "checkout_root", "install_command"]

_FIELDS = ("name", "distribution", "tasks", "licence", "citation")


@dataclass(frozen=True)
class CatalogueEntry:
    """One known plugin: its name, distribution, tasks, licence status and citation."""

    name: str
    distribution: str
    tasks: tuple[str, ...]
    licence: str
    citation: str
    description: str = ""


_PACKAGED = Path(__file__).resolve().with_name("plugins.yaml")  # in a built package only


def checkout_root() -> Path | None:
    """The source checkout holding this package (``registry/`` next to it), if any."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "registry" / "plugins.yaml").is_file() else None


def catalogue_path() -> Path:
    """Where the catalogue is read from: ``$PSYM_CATALOGUE``, else the packaged copy, else the
    checkout's ``registry/plugins.yaml``."""
    env = os.environ.get("PSYM_CATALOGUE")
    if env:
        return Path(env)
    if _PACKAGED.is_file():
        return _PACKAGED
    root = checkout_root()
    if root is None:
        raise PsymError(
            f"no plugin catalogue: {_PACKAGED} is missing (reinstall psymetrics-core, "
            "or set PSYM_CATALOGUE to a plugins.yaml)"
        )
    return root / "registry" / "plugins.yaml"


def catalogue(path: str | Path | None = None) -> list[CatalogueEntry]:
    """Every catalogue entry, validated (a bad entry is an error naming it)."""
    p = Path(path) if path is not None else catalogue_path()
    raw = load_yaml(p, what="catalogue file")
    entries = (raw or {}).get("plugins") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        raise PsymError(f"{p}: expected a top-level 'plugins:' list")
    out: list[CatalogueEntry] = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise PsymError(f"{p}: plugins[{i}] is not a mapping")
        for f in _FIELDS:
            # a plugin that registers only conditions or backends lists no tasks: tasks: []
            if not e.get(f) and not (f == "tasks" and e.get(f) == []):
                raise PsymError(f"{p}: plugins[{i}] ({e.get('name', '?')}) lacks '{f}'")
        if not isinstance(e["tasks"], list):
            raise PsymError(f"{p}: plugins[{i}] ({e['name']}): 'tasks' must be a list")
        out.append(
            CatalogueEntry(
                name=str(e["name"]),
                distribution=str(e["distribution"]),
                tasks=tuple(str(t) for t in e["tasks"]),
                licence=str(e["licence"]),
                citation=str(e["citation"]),
                description=str(e.get("description", "")),
            )
        )
    return out


def find_entry(name: str, entries: list[CatalogueEntry] | None = None) -> CatalogueEntry:
    """The entry called ``name`` (or whose distribution or a task is ``name``)."""
    entries = catalogue() if entries is None else entries
    for e in entries:
        if name in (e.name, e.distribution) or name in e.tasks:
            return e
    known = ", ".join(e.name for e in entries)
    raise PsymError(f"no plugin '{name}' in the catalogue (known: {known})")


def install_command(
    entry: CatalogueEntry,
    root: Path | None = None,
    index_url: str | None = None,
    extra_index_urls: tuple[str, ...] = (),
    find_links: tuple[str, ...] = (),
) -> list[str]:
    """The pip command that installs ``entry``: editable from a checkout, else from the index.

    ``index_url``, ``extra_index_urls`` and ``find_links`` become pip's ``--index-url``,
    ``--extra-index-url`` and ``--find-links`` (a folder of built wheels, e.g. a checkout's
    ``dist/``); without them pip uses its configured index. Naming an index or wheels installs
    from them even in a checkout. A ``find_links`` folder that does not exist is an error.
    """
    for folder in find_links:
        if not folder.strip() or ("://" not in folder and not Path(folder).is_dir()):
            raise PsymError(f"--find-links {folder}: no such folder (build the wheels: make dist)")
    root = checkout_root() if root is None else root
    local = root / "plugins" / entry.distribution if root is not None else None
    pip = [sys.executable, "-m", "pip", "install"]
    named = index_url is not None or extra_index_urls or find_links
    if not named and local is not None and (local / "pyproject.toml").is_file():
        return [*pip, "-e", str(local)]
    opts = ["--index-url", index_url] if index_url else []
    for url in extra_index_urls:
        opts += ["--extra-index-url", url]
    for folder in find_links:
        opts += ["--find-links", folder]
    return [*pip, *opts, entry.distribution]


def install(
    name: str,
    index_url: str | None = None,
    extra_index_urls: tuple[str, ...] = (),
    find_links: tuple[str, ...] = (),
) -> tuple[list[str], int]:
    """Install the catalogue plugin ``name`` with pip; returns (command, exit status)."""
    entry = find_entry(name)
    cmd = install_command(entry, None, index_url, extra_index_urls, find_links)
    return cmd, subprocess.call(cmd)


def install_failure(name: str, cmd: list[str], status: int) -> str:
    """The line for a failed ``pip install`` of plugin ``name``: from pip's configured index
    (psymetrics is not published on the public one yet), the way to install from built wheels."""
    line = f"pip failed (exit {status}): {' '.join(cmd)}"
    if "-e" in cmd or "--find-links" in cmd or "--index-url" in cmd:
        return line
    return (
        f"{line}; psymetrics' plugins are not on the public package index yet: build the wheels "
        f"in a checkout (make dist) and run psym install {name} --find-links dist"
    )
