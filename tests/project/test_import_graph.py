"""No import cycles in psymetrics_core (issue 10: runner<->judge and plugins<->registry), nor in
the bundled plugins' packages (issue 23: projective's kind<->tasks).

Two checks: (1) a static import graph over every module of ``psymetrics_core`` -- module-level
AND function-level imports, without ``if TYPE_CHECKING:`` blocks -- has no cycle (Tarjan's
strongly connected components); an import of an enclosing package is not an edge, because a
package is always initialised before its submodules. (2) Every module imports on its own in a
fresh interpreter: a child forked from one interpreter that has loaded only the third-party
modules the core imports at module level (numpy, pandas, scipy, ...) and none of psymetrics', so
each child starts from the state a fresh ``python -c "import MODULE"`` reaches before its first
psymetrics import, without loading pandas and scipy again for each of the ~200 modules (160 s
of CPU in separate interpreters). A probe child that imports them all first names the modules
outside psymetrics that this loads besides (pydantic's internals, asyncio, ...), and the parent
loads those too, so that no child loads them again. The child importing ``a.b.m`` is forked from
one that imported its package ``a.b`` alone, which is the state a fresh interpreter reaches
before running ``m``'s own code (see _IMPORTER), so no package __init__ runs again for each of
its modules (about 27 s of CPU for this file instead of 38 s).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
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


@functools.cache  # the cycle check and the importer's preloads read the same modules
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


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

    visit(_tree(path))
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


# The importer: loads the modules named on its command line before "--"; forks a probe child
# that imports every module named after "--" and answers which modules outside psymetrics that
# loaded (the rest of pydantic, asyncio, sqlite3, ... that a module-level name only starts), and
# loads those too; says which psymetrics modules it holds (none, or the children would not start
# fresh); then for each module named on stdin answers one JSON line: the traceback of importing
# it alone ("" when the import worked) and the importing child's exit status.
#
# ``import a.b.m`` in a fresh interpreter first imports ``a``, then ``a.b``, each to its end,
# and only then runs ``m``'s own code. So the child importing ``a.b.m`` is forked from a
# "package child" of the importer that imported ``a.b`` alone (started on the first module of
# ``a.b`` asked for, and kept): it starts in the state a fresh interpreter reaches right before
# ``m``'s code, without importing ``a.b``'s __init__ (and all it imports) again for each of its
# modules; where ``a.b`` itself fails to import, every module of it gets that traceback, as a
# fresh ``import a.b.m`` would. A top-level module is imported by a child of the importer.
_IMPORTER = """
import importlib, json, os, sys, traceback
split = sys.argv.index("--")
def preload(names):
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:
            pass  # not installed: a core module that needs it fails in its child
preload(sys.argv[1:split])
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    before = set(sys.modules)
    preload(sys.argv[split + 1:])
    loaded = sorted(m for m in set(sys.modules) - before if not m.startswith("psymetrics"))
    os.write(w, json.dumps(loaded).encode())
    os._exit(0)
os.close(w)
with os.fdopen(r, "rb") as fh:
    preload(json.loads(fh.read().decode() or "[]"))
os.waitpid(pid, 0)
print(json.dumps(sorted(m for m in sys.modules if m.startswith("psymetrics"))), flush=True)

def alone(module):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stdout carries the answers
        try:
            importlib.import_module(module)
            err = ""
        except BaseException:
            err = traceback.format_exc()
        os.write(w, err.encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        err = fh.read().decode(errors="replace")
    status = os.waitpid(pid, 0)[1]
    return {"error": err, "status": status}

packages = {}  # package -> (requests to its child, answers from it, its pid)

def package_child(package):
    if package not in packages:
        ask_r, ask_w = os.pipe()
        tell_r, tell_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(ask_w)
            os.close(tell_r)
            for asks, answers, _ in packages.values():  # the other package children's pipes
                asks.close()
                answers.close()
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            try:
                importlib.import_module(package)
                failed = None
            except BaseException:
                failed = traceback.format_exc()
            with os.fdopen(ask_r) as asks, os.fdopen(tell_w, "w") as answers:
                for line in asks:
                    answer = {"error": failed, "status": 0} if failed else alone(line.strip())
                    answers.write(json.dumps(answer) + "\\n")
                    answers.flush()
            os._exit(0)
        os.close(ask_r)
        os.close(tell_w)
        packages[package] = (os.fdopen(ask_w, "w"), os.fdopen(tell_r), pid)
    return packages[package]

for line in sys.stdin:
    module = line.strip()
    package = module.rpartition(".")[0]
    if package:
        asks, answers, _ = package_child(package)
        asks.write(module + "\\n")
        asks.flush()
        answer = json.loads(answers.readline())
    else:
        answer = alone(module)
    print(json.dumps(answer), flush=True)
for asks, answers, pid in packages.values():
    asks.close()
    answers.close()
    os.waitpid(pid, 0)
"""


def _third_party_imports() -> list[str]:
    """The non-standard-library modules the core's modules import at module level."""
    found: set[str] = set()
    for path in MODULES.values():
        for node in _tree(path).body:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module)
    std = sys.stdlib_module_names
    return sorted(m for m in found if m.split(".")[0] not in std and not m.startswith(PKG))


IMPORTED = sorted(m for m in MODULES if not m.endswith("__main__"))


@pytest.fixture(scope="session")  # one importer per worker: the tests spread (tests/scheduling.py)
def import_alone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], dict]]:
    log = tmp_path_factory.mktemp("importer") / "stderr.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", _IMPORTER, *_third_party_imports(), "--", *IMPORTED],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            cwd=REPO,
            env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
        )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(module: str) -> dict:
        proc.stdin.write(module + "\n")
        proc.stdin.flush()
        answer = proc.stdout.readline()
        assert answer, f"the importer stopped: {log.read_text()[-2000:]}"
        return json.loads(answer)

    try:
        loaded = proc.stdout.readline()
        assert loaded, f"the importer did not start: {log.read_text()[-2000:]}"
        assert json.loads(loaded) == [], f"the preloads imported psymetrics: {loaded}"
        # it can fail: a module that does not exist gives its traceback
        assert "ModuleNotFoundError" in ask(f"{PKG}.no_such_module")["error"]
        yield ask
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


@pytest.mark.parametrize("module", IMPORTED)
def test_each_module_imports_alone_in_a_fresh_interpreter(module, import_alone):
    answer = import_alone(module)
    assert answer["status"] == 0 and not answer["error"], answer["error"].strip().splitlines()[-1:]
