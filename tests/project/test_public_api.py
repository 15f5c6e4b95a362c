"""The stable surface for plugin authors (issue 23, item 7) and the package's shape (item 1).

- ``psymetrics_core.__all__`` names resolve, to the very objects their defining modules hold.
- Old module paths from before the layered layout are gone (the package was never published):
  they fail to import like any missing module.
- At most 6 top-level modules and 13 subpackages; each subpackage's ``__init__`` docstring says
  its job and which layers it may import, matching the one import direction.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import psymetrics_core

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "psymetrics_core"

# The import direction (BRIEF / CONTRIBUTING): each layer imports only from the layers before it.
LAYERS = [
    ["base"],
    ["instruments", "records", "backends"],
    ["contracts"],
    ["pluginsys"],
    ["administer"],
    ["study", "analysis", "export"],
    ["report"],
    ["cli"],
]


def test_all_names_resolve_to_their_defining_objects():
    for name in psymetrics_core.__all__:
        value = getattr(psymetrics_core, name)
        where = psymetrics_core._LAZY.get(name)
        if where is not None:
            assert value is getattr(importlib.import_module(f"psymetrics_core.{where}"), name)
    assert set(psymetrics_core._LAZY) <= set(psymetrics_core.__all__)
    ns: dict[str, object] = {}
    exec("from psymetrics_core import *", ns)
    assert set(psymetrics_core.__all__) <= set(ns)


def test_importing_the_package_stays_cheap():
    code = "import sys, psymetrics_core; print(sorted(m for m in sys.modules if 'administer' in m))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]"


def _subpackages() -> list[Path]:
    return sorted(p for p in CORE.iterdir() if p.is_dir() and p.name != "__pycache__")


def test_the_package_has_few_top_level_modules_and_subpackages():
    top = sorted(p.name for p in CORE.glob("*.py"))
    assert len(top) <= 6, top
    folders = _subpackages()
    assert all((p / "__init__.py").is_file() for p in folders), "a folder that is no package"
    assert not any(p.is_symlink() for p in CORE.rglob("*"))
    # the lm-eval export (tasks/ at the repository top) is a subpackage too once installed
    assert importlib.util.find_spec("psymetrics_core.lm_eval_tasks") is not None
    # 13: issue 32 added contracts/ (the types crossing the plugin boundary, below pluginsys)
    assert len(folders) + 1 <= 13, [p.name for p in folders]
    assert sorted(p.name for p in folders) == sorted(sum(LAYERS, []))


def _may_import(doc: str) -> list[str]:
    """The layers named by the docstring's ``May import:`` paragraph (``nothing`` -> [])."""
    paragraphs = [p for p in doc.split("\n\n") if p.startswith("May import:")]
    assert len(paragraphs) == 1, "one 'May import:' paragraph"
    text = " ".join(paragraphs[0].removeprefix("May import:").split())
    text = text.split("(")[0].strip().rstrip(".")
    return [] if text.startswith("nothing") else [w.strip() for w in text.split(",")]


@pytest.mark.parametrize("pkg", [name for layer in LAYERS for name in layer])
def test_each_subpackage_says_its_job_and_the_layers_it_may_import(pkg):
    doc = ast.get_docstring(ast.parse((CORE / pkg / "__init__.py").read_text())) or ""
    assert len(doc.splitlines()[0]) > 20, "the first line says the package's job"
    level = next(i for i, layer in enumerate(LAYERS) if pkg in layer)
    assert _may_import(doc) == [name for layer in LAYERS[:level] for name in layer]


def test_old_module_paths_are_gone():
    """No alias layer: a name from before the layered layout is a plain ModuleNotFoundError."""
    code = "import psymetrics_core.types"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 1
    assert "ModuleNotFoundError: No module named 'psymetrics_core.types'" in res.stderr
