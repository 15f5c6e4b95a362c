"""The plugin API (issue 32, item 1): ``psymetrics_core.api`` and the contract that plugins use it.

- Every public name resolves to the very object its defining module holds, and the names the
  type checker sees (api.py's ``TYPE_CHECKING`` imports) are exactly the ones served at run time.
- The import-linter contract "plugins use only the public API" names every core subpackage and
  every bundled plugin package, and it really fails on a plugin that imports an internal module.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from psymetrics_core import api

REPO = Path(__file__).resolve().parents[2]
CONTRACT = "plugins use only the public API (psymetrics_core, psymetrics_core.api)"


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _contract() -> dict:
    contracts = _pyproject()["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == CONTRACT)


def _plugin_packages() -> list[str]:
    found = (REPO / "plugins").glob("*/psymetrics_plugin_*")
    return sorted(p.name for p in found if (p / "__init__.py").is_file())  # not *.egg-info


def test_every_public_name_is_its_defining_object():
    assert len(api.__all__) == len(set(api.__all__)) > 60
    for name in api.__all__:
        module, attr = api.where(name)
        assert getattr(api, name) is getattr(importlib.import_module(module), attr), name
    with pytest.raises(AttributeError, match="no attribute 'read_txt'"):
        api.read_txt  # noqa: B018 - a misspelt name is an AttributeError, not None


def test_the_type_checker_sees_exactly_the_served_names():
    tree = ast.parse((REPO / "psymetrics_core" / "api.py").read_text())
    guard = next(n for n in tree.body if isinstance(n, ast.If))
    seen: dict[str, tuple[str, str]] = {}
    for node in guard.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            seen[alias.asname or alias.name] = (node.module, alias.name)
    assert seen == {name: api.where(name) for name in api.__all__}


def test_the_contract_names_every_core_subpackage_and_every_plugin():
    contract = _contract()
    core = REPO / "psymetrics_core"
    subpackages = sorted(
        f"psymetrics_core.{p.name}" for p in core.iterdir() if (p / "__init__.py").is_file()
    )
    assert sorted(set(contract["forbidden_modules"]) - {"psymetrics_core.__main__"}) == subpackages
    assert sorted(contract["source_modules"]) == _plugin_packages()
    roots = _pyproject()["tool"]["importlinter"]["root_packages"]
    assert set(_plugin_packages()) <= set(roots)
    # only the public modules stay importable: the root, api and (for plugin tests) testing
    public = {p.stem for p in core.glob("*.py")} - {"__main__"}
    assert public == {"__init__", "api", "testing"}


# make setup installs import-linter into the venv running the tests (its PATH need not name it)
_LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def test_the_contract_fails_on_a_plugin_importing_an_internal_module(tmp_path):
    """A copy of the real contract over one more plugin, whose only sin is one internal import."""
    pkg = tmp_path / "psymetrics_plugin_sinner"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from psymetrics_core.api import read_text\n")
    contract = _contract()
    lines = ["[importlinter]", "root_packages =", "    psymetrics_core", f"    {pkg.name}", ""]
    lines += ["[importlinter:contract:public]", f"name = {contract['name']}", "type = forbidden"]
    lines += ["source_modules =", f"    {pkg.name}", "forbidden_modules ="]
    lines += [f"    {m}" for m in contract["forbidden_modules"]]
    lines += [f"allow_indirect_imports = {contract['allow_indirect_imports']}"]
    ini = tmp_path / "contract.ini"
    ini.write_text("\n".join(lines) + "\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO)]))

    def lint() -> subprocess.CompletedProcess[str]:
        cmd = [_LINT_IMPORTS, "--config", str(ini), "--no-cache"]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)

    ok = lint()
    assert ok.returncode == 0, ok.stdout[-2000:]
    (pkg / "reader.py").write_text("from psymetrics_core.base.reading import read_text\n")
    bad = lint()
    assert bad.returncode == 1, bad.stdout[-2000:]
    assert "psymetrics_plugin_sinner is not allowed to import psymetrics_core.base" in bad.stdout
    assert "psymetrics_plugin_sinner.reader -> psymetrics_core.base.reading" in bad.stdout
