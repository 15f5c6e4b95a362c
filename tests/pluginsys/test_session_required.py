"""The Session is passed down (issue 32, item 6): only the entry points build a default one.

``Session()`` loads every installed plugin. The package root's functions (``administer/api.py``,
whose ``session_or_default`` the other entry points call) and the ``psym`` command's root
(``cli/__init__.py``: one session per invocation) may build one; every module below them, and
every bundled plugin, takes the session it is handed. A new ``Session()`` anywhere else fails
here, naming the file and line.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ALLOWED = {"psymetrics_core/administer/api.py", "psymetrics_core/cli/__init__.py"}


def _sources() -> list[Path]:
    core = sorted((REPO / "psymetrics_core").rglob("*.py"))
    plugins = sorted((REPO / "plugins").glob("*/psymetrics_plugin_*/**/*.py"))
    return core + plugins


def session_calls(source: str) -> list[int]:
    """The lines of ``source`` that call ``Session(...)`` (a bare name or an attribute)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name == "Session":
                out.append(node.lineno)
    return out


def test_the_scan_sees_every_spelling_of_a_call():
    code = "Session()\nx = session.Session(autoload=False)\nClientSession()\nSession\n"
    assert session_calls(code) == [1, 2]


def test_only_the_entry_points_build_a_session():
    found = []
    for path in _sources():
        rel = path.relative_to(REPO).as_posix()
        if rel in ALLOWED:
            continue
        found += [f"{rel}:{line}" for line in session_calls(path.read_text())]
    assert found == []


def test_the_allowed_modules_really_build_one():
    """The allow-list names real call sites (a stale entry would hide nothing and mean nothing)."""
    for rel in sorted(ALLOWED):
        assert session_calls((REPO / rel).read_text()), rel


@pytest.mark.parametrize(
    "module, function",
    [
        ("psymetrics_core.administer.runner", "evaluate"),
        ("psymetrics_core.administer.runner", "make_backend"),
        ("psymetrics_core.analysis.report", "analyze"),
        ("psymetrics_core.analysis.validity", "check_hypotheses"),
        ("psymetrics_core.report", "build_report"),
        ("psymetrics_core.report", "write_report"),
        ("psymetrics_core.report.sections", "build_context"),
        ("psymetrics_core.report.population_sections", "population_context"),
        ("psymetrics_plugin_contamination.run", "contamination"),
    ],
)
def test_below_the_public_api_the_session_is_required(module, function):
    param = inspect.signature(getattr(importlib.import_module(module), function)).parameters
    assert param["session"].default is inspect.Parameter.empty
    assert "None" not in str(param["session"].annotation)
