"""No import cycles in psymetrics_core (issue 10: runner<->judge and plugins<->registry), nor in
the bundled plugins' packages (issue 23: projective's kind<->tasks).

Two checks: (1) a static import graph over every module of ``psymetrics_core`` -- module-level
AND function-level imports, without ``if TYPE_CHECKING:`` blocks -- has no cycle (Tarjan's
strongly connected components); an import of an enclosing package is not an edge, because a
package is always initialised before its submodules. (2) Every module imports on its own in a
fresh interpreter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PKG = "psymetrics_core"


def _modules(root: Path = REPO, pkg: str = PKG) -> dict[str, Path]:
    """Every module of the package ``root/pkg`` by dotted name."""
    out = {}
    for p in sorted((root / pkg).rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = _modules()
# each bundled plugin's package: plugins/<distribution>/<distribution with underscores>/
PLUGIN_PACKAGES = {
    d.name.replace("-", "_"): d for d in sorted((REPO / "plugins").glob("psymetrics-plugin-*"))
}


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imports(name: str, path: Path, modules: dict[str, Path] = MODULES) -> set[str]:
    """Modules of ``name``'s own package that it imports anywhere (not under TYPE_CHECKING)."""
    pkg = name.split(".")[0]
    base = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit_node(other)
                continue
            visit_node(child)

    def visit_node(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith(pkg))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                mod = ".".join(parts + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.startswith(pkg):
                for a in node.names:
                    sub = f"{mod}.{a.name}"
                    found.add(sub if sub in modules else mod)
        visit(node)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in modules and m != name and not name.startswith(m + ".")}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan 1972)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return cycles


def test_cycle_detector_finds_a_known_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_the_detector_sees_function_level_imports(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .session import Session\n"
        "def f():\n    from .runner import evaluate\n"
    )
    assert _imports("psymetrics_core.administer.judge", p) == {"psymetrics_core.administer.runner"}


def test_no_import_cycles_in_the_core():
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    assert graph["psymetrics_core.administer.judge"] >= {"psymetrics_core.backends.base"}
    assert import_cycles(graph) == []


@pytest.mark.parametrize("pkg", sorted(PLUGIN_PACKAGES))
def test_no_import_cycles_in_the_bundled_plugins(pkg):
    modules = _modules(PLUGIN_PACKAGES[pkg], pkg)
    assert f"{pkg}.__init__" not in modules and pkg in modules, pkg
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert import_cycles(graph) == []


def test_the_detector_sees_a_plugins_relative_import_cycle(tmp_path):
    pkg = tmp_path / "psymetrics_plugin_x"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kind.py").write_text("def f():\n    from .tasks import g\n")
    (pkg / "tasks.py").write_text("from . import kind\n")
    modules = _modules(tmp_path, "psymetrics_plugin_x")
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert import_cycles(graph) == [["psymetrics_plugin_x.kind", "psymetrics_plugin_x.tasks"]]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.endswith("__main__")))
def test_each_module_imports_alone_in_a_fresh_interpreter(module):
    r = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, cwd=REPO
    )
    assert r.returncode == 0, r.stderr.strip().splitlines()[-1:]
