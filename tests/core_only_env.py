"""A real core-only Python environment for tests, built in a temporary folder in a second.

``core_only(tmp, extra=...)`` lays out a site folder of symbolic links to what ``psymetrics-core``
installs (its ``install_requires`` and their requirements, resolved from this environment's
installed distributions) and, for the editable psymetrics distributions named, their sources and
``.dist-info`` (so their entry points are found). ``run_psym(site, args)`` runs ``psym`` in a
``python -S`` subprocess whose ``sys.path`` is the standard library and that folder only: no
torch, no transformers, no plugin that was not named — what ``pip install psymetrics-core`` gives
(a virtual environment with ``--system-site-packages`` would see everything installed here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
CORE = "psymetrics-core"


def _norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _closure(names: Iterable[str], nodeps: Iterable[str] = ()) -> dict[str, metadata.Distribution]:
    """The installed distributions ``names`` need (markers evaluated, no extras), and the
    distributions ``nodeps`` without their requirements."""
    found = {_norm(n): metadata.distribution(n) for n in nodeps}
    expanded: set[str] = set()
    todo = [_norm(n) for n in names]
    while todo:
        name = todo.pop()
        if name in expanded:
            continue
        expanded.add(name)
        dist = found.setdefault(name, metadata.distribution(name))
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(_norm(req.name))
    return found


def _source_root(dist: metadata.Distribution) -> Path | None:
    """The folder holding an editable psymetrics distribution's import package."""
    name = _norm(dist.metadata["Name"])
    if name == CORE:
        return REPO
    folder = REPO / "plugins" / name
    return folder if folder.is_dir() else None


def core_only(
    tmp: Path,
    extra: Sequence[str] = (),
    *,
    nodeps: Sequence[str] = (),
    without_metadata: Sequence[str] = (),
) -> list[Path]:
    """``sys.path`` entries of an environment holding ``psymetrics-core``, the distributions
    ``extra`` (with their requirements), the distributions ``nodeps`` (without them, as
    ``pip install --no-deps`` leaves them) and the import packages ``without_metadata`` without
    their ``.dist-info`` (as a copied or half-removed install leaves them)."""
    site = tmp / "site"
    site.mkdir(parents=True)
    paths = [site]
    dists = _closure([CORE, *extra], [_norm(n) for n in nodeps])
    for name in without_metadata:
        dists.pop(_norm(name), None)
    for dist in dists.values():
        root = _source_root(dist)
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in sorted(tops):
            is_meta = top.endswith(".dist-info")
            if root is not None and not is_meta:
                continue  # an editable install's .pth/finder files: its sources are on the path
            target = Path(str(dist.locate_file(top)))
            if (target.exists() or target.is_symlink()) and not (site / top).exists():
                (site / top).symlink_to(target)
        if root is not None and root not in paths:
            paths.append(root)
    for module in without_metadata:
        spec_dir = Path(str(metadata.distribution(module).locate_file(module)))
        if not (site / module).exists():
            (site / module).symlink_to(spec_dir)
    return paths


_BOOT = """
import json, runpy, sys
sys.path[:0] = json.loads(sys.argv[1])
sys.argv = ["psym", *sys.argv[2:]]
runpy.run_module("psymetrics_core", run_name="__main__")
"""


def run_psym(
    paths: Sequence[Path], args: Sequence[str], tmp: Path
) -> subprocess.CompletedProcess[str]:
    """``psym ARGS`` in a ``python -S`` subprocess seeing only ``paths`` and the stdlib."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PSYM_", "PYTHON"))}
    env["PSYM_CACHE_DIR"] = str(tmp / "cache")
    cmd = [sys.executable, "-S", "-c", _BOOT, json.dumps([str(p) for p in paths]), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=tmp)
