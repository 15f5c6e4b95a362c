"""Build a wheel and an sdist of psymetrics-core and of every plugin, refusing build warnings.

``python tools/build_dists.py [--outdir dist] [--no-isolation]`` (``make dist`` runs it; so does
the loopback package-index test). Each distribution is built with ``python -m build``; a build
whose log mentions a warning (setuptools' "Package would be ignored", deprecated licence
classifiers, ...) fails, and ``twine check --strict`` must pass on every file.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WARNING = re.compile(r"warning|deprecat|would be ignored", re.IGNORECASE)


def projects(root: Path = REPO) -> list[Path]:
    """The core (the repository root) and every ``plugins/psymetrics-plugin-*`` folder."""
    plugins = sorted(p for p in root.glob("plugins/psymetrics-plugin-*") if p.is_dir())
    return [root, *plugins]


def build(project: Path, outdir: Path, isolation: bool = True) -> list[str]:
    """Build ``project`` into ``outdir``; returns the log's warning lines (empty when clean)."""
    cmd = [sys.executable, "-m", "build", "--outdir", str(outdir), str(project)]
    if not isolation:
        cmd.insert(3, "--no-isolation")
    # PYTHONDONTWRITEBYTECODE makes setuptools log "byte-compiling is disabled" as a warning
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    log = res.stdout + res.stderr
    if res.returncode != 0:
        raise SystemExit(f"{project}: build failed (exit {res.returncode}):\n{log[-4000:]}")
    return [line for line in log.splitlines() if WARNING.search(line)]


def main(argv: list[str] | None = None) -> int:
    """Build every distribution into ``--outdir`` and ``twine check`` them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outdir", type=Path, default=REPO / "dist")
    parser.add_argument(
        "--no-isolation", action="store_true", help="build with this environment's setuptools"
    )
    args = parser.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    failed = False
    for project in projects():
        warnings = build(project, args.outdir, isolation=not args.no_isolation)
        name = project.name if project != REPO else "psymetrics-core"
        if warnings:
            failed = True
            print(f"{name}: build warnings:", *warnings, sep="\n  ", file=sys.stderr)
        else:
            print(f"{name}: built without warnings")
    files = sorted(str(p) for p in args.outdir.iterdir() if p.suffix in (".whl", ".gz"))
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files])
    return 1 if failed or check.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
