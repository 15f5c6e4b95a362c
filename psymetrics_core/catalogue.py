"""The catalogue of known plugins (``registry/plugins.yaml``) and installing from it.

The catalogue is read from ``PSYM_CATALOGUE`` when set, else from ``registry/plugins.yaml`` of
the source checkout this package runs from. ``install`` uses ``sys.executable -m pip``: from
``plugins/<distribution>`` when the checkout has it (editable), else from the package index.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import PsymError

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


def checkout_root() -> Path | None:
    """The source checkout holding this package (``registry/`` next to it), if any."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "registry" / "plugins.yaml").is_file() else None


def catalogue_path() -> Path:
    """Where the catalogue is read from."""
    env = os.environ.get("PSYM_CATALOGUE")
    if env:
        return Path(env)
    root = checkout_root()
    if root is None:
        raise PsymError(
            "no plugin catalogue: set PSYM_CATALOGUE to a registry/plugins.yaml "
            "(it ships in the psymetrics source checkout)"
        )
    return root / "registry" / "plugins.yaml"


def catalogue(path: str | Path | None = None) -> list[CatalogueEntry]:
    """Every catalogue entry, validated (a bad entry is an error naming it)."""
    p = Path(path) if path is not None else catalogue_path()
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PsymError(f"{p}: no such catalogue file") from None
    except yaml.YAMLError as exc:
        raise PsymError(f"{p}: invalid YAML ({exc})") from None
    entries = (raw or {}).get("plugins") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        raise PsymError(f"{p}: expected a top-level 'plugins:' list")
    out: list[CatalogueEntry] = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise PsymError(f"{p}: plugins[{i}] is not a mapping")
        for f in _FIELDS:
            if not e.get(f):
                raise PsymError(f"{p}: plugins[{i}] ({e.get('name', '?')}) lacks '{f}'")
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


def install_command(entry: CatalogueEntry, root: Path | None = None) -> list[str]:
    """The pip command that installs ``entry``: editable from a checkout, else from the index."""
    root = checkout_root() if root is None else root
    local = root / "plugins" / entry.distribution if root is not None else None
    if local is not None and (local / "setup.cfg").is_file():
        return [sys.executable, "-m", "pip", "install", "-e", str(local)]
    return [sys.executable, "-m", "pip", "install", entry.distribution]


def install(name: str) -> tuple[list[str], int]:
    """Install the catalogue plugin ``name`` with pip; returns (command, exit status)."""
    cmd = install_command(find_entry(name))
    return cmd, subprocess.call(cmd)
