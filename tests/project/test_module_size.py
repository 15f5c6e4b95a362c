"""Project rule: small modules with one job, none over ~500 lines (CONTRIBUTING.md).

Counts the lines of every Python module of ``psymetrics_core`` and of the bundled plugins'
packages (their tests excluded). A module listed in ``KNOWN`` is over the limit today and is
named here so that the debt is visible (none today); any other module over the limit fails.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIMIT = 500
# over the limit today, to be split by its owner (path relative to the repository root)
KNOWN: set[str] = set()


def _modules() -> list[Path]:
    core = sorted((REPO / "psymetrics_core").rglob("*.py"))
    plugins = [
        p
        for p in sorted((REPO / "plugins").glob("psymetrics-plugin-*/psymetrics_plugin_*/**/*.py"))
        if "tests" not in p.relative_to(REPO).parts
    ]
    return core + plugins


def test_no_module_over_the_limit() -> None:
    modules = _modules()
    assert any(p.name == "sections.py" for p in modules)  # the walk found the report package
    over = {
        str(p.relative_to(REPO)): n
        for p in modules
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > LIMIT
    }
    unexpected = {k: v for k, v in over.items() if k not in KNOWN}
    assert not unexpected, f"modules over {LIMIT} lines (split along a real seam): {unexpected}"
