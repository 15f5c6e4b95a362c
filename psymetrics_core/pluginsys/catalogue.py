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
) -> list[str]:
    """The pip command that installs ``entry``: editable from a checkout, else from the index.

    ``index_url`` and ``extra_index_urls`` become pip's ``--index-url``/``--extra-index-url``;
    without them pip uses its configured index. Naming an index installs from it even in a
    checkout.
    """
    root = checkout_root() if root is None else root
    local = root / "plugins" / entry.distribution if root is not None else None
    pip = [sys.executable, "-m", "pip", "install"]
    if index_url is None and not extra_index_urls and local is not None:
        if (local / "pyproject.toml").is_file():
            return [*pip, "-e", str(local)]
    opts = ["--index-url", index_url] if index_url else []
    for url in extra_index_urls:
        opts += ["--extra-index-url", url]
    return [*pip, *opts, entry.distribution]


def install(
    name: str, index_url: str | None = None, extra_index_urls: tuple[str, ...] = ()
) -> tuple[list[str], int]:
    """Install the catalogue plugin ``name`` with pip; returns (command, exit status)."""
    cmd = install_command(find_entry(name), index_url=index_url, extra_index_urls=extra_index_urls)
    return cmd, subprocess.call(cmd)
