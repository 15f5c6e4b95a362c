"""The stable surface for plugin authors (issue 23, item 7) and the package's shape (item 1).

- ``psymetrics_core.__all__`` names resolve, to the very objects their defining modules hold.
- Every module path from before the layered layout (``psymetrics_core._moved``) still imports,
  warns exactly once naming the new path, and is the same module object as the new one (so
  classes, ``isinstance`` and pickles are unchanged).
- At most 6 top-level modules and 13 subpackages; each subpackage's ``__init__`` docstring says
  its job and which layers it may import, matching the one import direction.
"""

from __future__ import annotations

import ast
import importlib
import json
import pickle
import pkgutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import psymetrics_core
from psymetrics_core import _moved

REPO = Path(__file__).resolve().parents[1]
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


def _old_names() -> dict[str, str]:
    """Every old full name -> its new full name: the table plus each moved package's modules."""
    out = {f"psymetrics_core.{old}": f"psymetrics_core.{new}" for old, new in _moved.MOVED.items()}
    for old, new in list(out.items()):
        pkg = importlib.import_module(new)
        for info in pkgutil.walk_packages(getattr(pkg, "__path__", []), prefix=f"{new}."):
            out[old + info.name[len(new) :]] = info.name
    return out


OLD = _old_names()

_PROBE = """
import importlib, json, sys, warnings
old_to_new = json.loads(sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import psymetrics_core
    for old in old_to_new:
        importlib.import_module(old)
        importlib.import_module(old)  # a second import warns no more
        exec(f"import {old}")
same = {old: sys.modules[old] is sys.modules[new] for old, new in old_to_new.items()}
msgs = [str(w.message) for w in caught if w.category is DeprecationWarning]
print(json.dumps({"same": same, "messages": msgs}))
"""


def test_every_old_module_path_imports_warns_once_and_is_the_new_module():
    assert len(OLD) > len(_moved.MOVED)  # the moved packages' modules are covered too
    res = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(OLD)], capture_output=True, text=True, cwd=REPO
    )
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout)
    assert [old for old, same in out["same"].items() if not same] == []
    for old, new in OLD.items():
        mine = [m for m in out["messages"] if m.startswith(f"{old} moved to ")]
        assert mine == [_moved.message(old, new)], old
    removed = [m for m in out["messages"] if " is removed; " in m]
    assert removed == [
        f"psymetrics_core.{r} is removed; {why}" for r, why in _moved.REMOVED.items()
    ]
    assert len(out["messages"]) == len(OLD) + len(removed)  # nothing else warned


@pytest.mark.parametrize("old", sorted(_moved.GONE))
def test_a_gone_module_is_one_import_error_naming_its_replacement(old):
    """The session facades and the start-up memos went (issue 23, items 3 and 5): no alias."""
    res = subprocess.run(
        [sys.executable, "-c", f"import psymetrics_core.{old}"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert res.returncode == 1
    assert f"ImportError: psymetrics_core.{old} is gone: {_moved.GONE[old]}" in res.stderr


def test_old_paths_give_the_same_classes_isinstance_and_pickles():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from psymetrics_core.errors import PsymError as OldError
        from psymetrics_core.kinds.task import TaskScores as OldScores
        from psymetrics_core.types import Item as OldItem
    from psymetrics_core.administer.kinds.task import TaskScores
    from psymetrics_core.base.errors import PsymError
    from psymetrics_core.base.types import Item

    assert (OldItem, OldError, OldScores) == (Item, PsymError, TaskScores)
    assert OldItem.__module__ == "psymetrics_core.base.types"
    err = pickle.loads(pickle.dumps(OldError("one line")))
    assert isinstance(err, PsymError) and str(err) == "one line"
    assert pickle.dumps(PsymError("x")) == pickle.dumps(OldError("x"))


def test_a_module_that_exists_is_never_shadowed(monkeypatch):
    """An old name that is a real module again wins over the table."""
    import psymetrics_core.records as records

    monkeypatch.setitem(_moved.MOVED, "records.writer", "records.rundir")
    assert _moved.FINDER.find_spec("psymetrics_core.records.writer", records.__path__) is None
    assert _moved.FINDER.find_spec("psymetrics_core.records.nothing_here", records.__path__) is None
    assert _moved.FINDER.find_spec("psymetrics_core.types", psymetrics_core.__path__) is not None
    assert _moved.FINDER in sys.meta_path


def test_modules_that_left_for_a_plugin(monkeypatch):
    """A module that left the core imports from its plugin, or fails naming the distribution."""
    assert _moved.new_name("psymetrics_core.backends.hf") == "psymetrics_plugin_hf.hf"
    assert _moved.new_name("psymetrics_core.backends.onnx_llama") == (
        "psymetrics_plugin_llama_engine.onnx_llama"
    )
    monkeypatch.setitem(
        _moved.LEFT,
        "backends.gone",
        ("psymetrics_plugin_nowhere.gone", "psymetrics-plugin-nowhere"),
    )
    with pytest.raises(ModuleNotFoundError, match="pip install psymetrics-plugin-nowhere"):
        importlib.import_module("psymetrics_core.backends.gone")
    from psymetrics_plugin_projective import prompts

    monkeypatch.setitem(
        _moved.LEFT, "backends.moved_out", (prompts.__name__, "psymetrics-plugin-projective")
    )
    monkeypatch.delitem(sys.modules, "psymetrics_core.backends.moved_out", raising=False)
    with pytest.warns(DeprecationWarning, match="moved to psymetrics_plugin_projective.prompts"):
        mod = importlib.import_module("psymetrics_core.backends.moved_out")
    assert mod is prompts
    sys.modules.pop("psymetrics_core.backends.moved_out")


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
