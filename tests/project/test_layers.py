"""The core's layers (issue 23, item 1; CONTRIBUTING.md, "Architecture").

- the import-linter "layers" contract in pyproject.toml holds (``lint-imports``, also run by
  ``make lint``), and a deliberately broken copy of it is reported broken (the check can fail);
- no package-level import cycle: the module graph of ``test_import_graph`` collapsed to packages;
- imports inside functions only where an optional heavy dependency is loaded on demand: at
  most ``MAX_FUNCTION_IMPORTS`` in the core, each with a comment saying why (on its line or the
  line above).
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_import_graph import MODULES, _imports, import_cycles

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "psymetrics_core"
MAX_FUNCTION_IMPORTS = 30


def _lint_imports(config: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    cmd = [str(exe) if exe.exists() else shutil.which("lint-imports") or "lint-imports"]
    if config is not None:
        cmd += ["--config", str(config)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)


def test_the_layers_contract_is_kept() -> None:
    r = _lint_imports()
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "psymetrics_core layers KEPT" in r.stdout


def test_an_inverted_layer_order_is_reported_broken(tmp_path: Path) -> None:
    """The same contract with base on top: every real import becomes a violation."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index("[tool.importlinter]")
    cfg = text[start:].replace('  "cli",\n', '  "base",\n  "cli",\n', 1)
    cfg = cfg.replace(
        '  "instruments | records | backends",\n  "base",\n',
        '  "instruments | records | backends",\n',
        1,
    )
    bad = tmp_path / "inverted.toml"
    bad.write_text(cfg, encoding="utf-8")
    r = _lint_imports(bad)
    assert r.returncode != 0 and "BROKEN" in r.stdout, r.stdout[-2000:]


def _package(module: str) -> str:
    """The package a module belongs to: ``psymetrics_core.administer.kinds.task`` ->
    ``psymetrics_core.administer.kinds``; a package is its own."""
    path = MODULES[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def test_no_package_level_import_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        src = _package(name)
        graph.setdefault(src, set())
        for dep in _imports(name, path):
            dst = _package(dep)
            # an import of an enclosing package is no edge (it is initialised first)
            if dst != src and not src.startswith(dst + "."):
                graph[src].add(dst)
    for deps in graph.values():
        deps &= set(graph)
    assert import_cycles(graph) == []


def function_imports(root: Path) -> list[tuple[str, int, str, bool]]:
    """(file, line, module, commented) of every import statement inside a function."""
    out = []
    for path in sorted(root.rglob("*.py")):
        if "lm_eval_tasks" in path.parts:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    mod = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                    here = lines[node.lineno - 1]
                    above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
                    commented = "#" in here or above.startswith("#")
                    out.append((str(path.relative_to(root)), node.lineno, mod or ".", commented))
    return out


def test_function_level_imports_are_few_and_explained() -> None:
    found = function_imports(CORE)
    listing = "\n".join(f"{f}:{n} {m}{'' if c else '  (no comment)'}" for f, n, m, c in found)
    assert len(found) <= MAX_FUNCTION_IMPORTS, f"{len(found)} imports inside functions:\n{listing}"
    internal = [x for x in found if x[2].startswith("psymetrics_core")]
    assert not internal, f"psymetrics modules imported inside functions: {internal}"
    assert all(c for *_, c in found), listing


def test_the_counter_sees_a_function_level_import(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "import os\n\ndef f():\n    # numpy only when asked\n    import numpy\n\n"
        "def g():\n    from json import dumps\n"
    )
    got = [(m, c) for _, _, m, c in function_imports(tmp_path)]
    assert got == [("numpy", True), ("json", False)]


@pytest.mark.parametrize("name", ["__init__.py", "__main__.py", "testing.py"])
def test_public_entry_files_exist(name: str) -> None:
    assert (CORE / name).is_file()
