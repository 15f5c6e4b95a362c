"""Issue 23, item 3: the Session is handed down, never looked up.

No module of ``psymetrics_core`` holds a ``ContextVar`` (the current session, an ambient judge)
or keeps a ``Session`` / plugin manager in a module-level or class-level variable; the
``pluginsys.registry`` / ``pluginsys.plugins`` facades that looked one up are gone. The one
process-wide session is lm-eval's: ``export/lm_eval_runtime.py`` is an entry point that lm-eval
calls with its own arguments only, so it builds one on first use (a cached function).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PKG = REPO / "psymetrics_core"
# names whose call builds (or whose annotation names) a session or a plugin manager
HOLDERS = {"Session", "PluginManager", "make_plugin_manager"}
CACHES = {"cache", "lru_cache", "cached_property"}
ENTRY_POINT_CACHE = {"export/lm_eval_runtime.py"}


def _name(node: ast.AST | None) -> str:
    """The last dotted part of a name, attribute, call or subscript (``a.b.C(...)`` -> ``C``)."""
    while isinstance(node, ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _names_in(node: ast.AST | None) -> set[str]:
    return {_name(n) for n in ast.walk(node)} if node is not None else set()


def _stored_in(body: list[ast.stmt]) -> list[tuple[int, str]]:
    """Assignments in ``body`` (and its top-level if/try/with blocks) that keep a session or a
    plugin manager: a call of ``HOLDERS`` as the value, or an annotation naming one. Fields of
    an object that is handed down (``CellRun.session``) are instance state, not stored here."""
    found: list[tuple[int, str]] = []
    for node in body:
        if isinstance(node, ast.If | ast.Try | ast.With):
            inner = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            found += _stored_in(inner)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            # (an annotation without a value, e.g. a dataclass field, stores nothing)
            calls = {_name(c) for c in ast.walk(node.value) if isinstance(c, ast.Call)}
            notes = _names_in(node.annotation) if isinstance(node, ast.AnnAssign) else set()
            hit = (calls | notes) & HOLDERS
            if hit:
                found.append((node.lineno, ", ".join(sorted(hit))))
    return found


def problems(source: str, where: str) -> list[str]:
    """Every ambient-session construct of one module's ``source``, one line each."""
    tree = ast.parse(source)
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "contextvars":
            out.append(f"{where}:{node.lineno}: imports contextvars")
        if isinstance(node, ast.Call) and _name(node) == "ContextVar":
            out.append(f"{where}:{node.lineno}: defines a ContextVar")
        if isinstance(node, ast.ClassDef):
            out += [
                f"{where}:{n}: class {node.name} keeps a {what}"
                for n, what in _stored_in(node.body)
            ]
        if isinstance(node, ast.FunctionDef) and where not in ENTRY_POINT_CACHE:
            cached = {_name(d) for d in node.decorator_list} & CACHES
            if cached and HOLDERS & {_name(c) for c in ast.walk(node) if isinstance(c, ast.Call)}:
                out.append(f"{where}:{node.lineno}: {node.name}() caches a session")
        if isinstance(node, ast.Name) and node.id in ("current_session", "current_judge"):
            out.append(f"{where}:{node.lineno}: uses {node.id}")
    out += [f"{where}:{n}: module-level {what}" for n, what in _stored_in(tree.body)]
    return out


def test_the_check_finds_each_kind_of_ambient_session():
    """The detector is not vacuous: each construct it forbids is reported."""
    bad = """
from contextvars import ContextVar
from psymetrics_core.pluginsys.session import Session
_ACTIVE: ContextVar = ContextVar("s", default=None)
DEFAULT = Session()
if True:
    PM, RECORDS = make_plugin_manager()
class Holder:
    _default: Session | None = None
@functools.cache
def shared():
    return Session()
def f():
    return current_session()
"""
    found = problems(bad, "x.py")
    for text in (
        "imports contextvars",
        "defines a ContextVar",
        ":5: module-level Session",
        ":7: module-level make_plugin_manager",
        "class Holder keeps a Session",
        "shared() caches a session",
        "uses current_session",
    ):
        assert any(text in line for line in found), (text, found)
    # handing a session down is fine
    good = "def run(session: Session) -> None:\n    session.instruments()\n"
    assert problems(good, "y.py") == []


def test_no_module_looks_up_an_ambient_session_or_judge():
    found = []
    for path in sorted(PKG.rglob("*.py")):
        where = path.relative_to(PKG).as_posix()
        found += problems(path.read_text(encoding="utf-8"), where)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("module", ["pluginsys.registry", "pluginsys.plugins"])
def test_the_lookup_facades_are_gone(module: str):
    assert not (PKG / f"{module.replace('.', '/')}.py").exists()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"psymetrics_core.{module}")


def test_session_and_judge_have_no_ambient_entry_points():
    from psymetrics_core.administer import judge
    from psymetrics_core.pluginsys import session

    for name in ("default", "activate"):
        assert not hasattr(session.Session, name), name
    assert not hasattr(session, "current_session")
    for name in ("current_judge", "judge_scope"):
        assert not hasattr(judge, name), name


def test_two_sessions_do_not_share_plugins():
    """A plugin registered on one session is invisible to another and to a fresh one."""
    from psymetrics_core import hookimpl, list_instruments
    from psymetrics_core.pluginsys.loader import make_plugin_manager
    from psymetrics_core.pluginsys.session import Session

    class Shout:
        @hookimpl
        def register_parsers(self, register):
            register("shout", lambda text, options: (None, "unparsed"))

    one, two = Session(*make_plugin_manager(autoload=False)), Session()
    one.register(Shout(), "shout")
    assert "shout" in one.parsers() and "shout" not in two.parsers()
    assert "shout" not in Session().parsers()
    assert "bfi" in list_instruments(session=two) and "bfi" not in one.task_ids()
