"""Entry-point discovery with real distributions: broken plugins are reported and skipped.

Each test writes a small installed distribution (``*.dist-info`` with ``entry_points.txt`` next
to its module) into a temp dir and runs the real ``psym`` in a subprocess with that dir on
``PYTHONPATH``, exactly as an installed plugin is found by ``importlib.metadata``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PSYM = [sys.executable, "-m", "psymetrics_core"]


def _write_dist(root: Path, name: str, module_source: str, ep_name: str | None = None) -> None:
    mod = name.replace("-", "_")
    (root / f"{mod}.py").write_text(module_source)
    info = root / f"{mod}-0.3.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.3.1\n")
    (info / "entry_points.txt").write_text(f"[psymetrics]\n{ep_name or mod} = {mod}\n")
    (info / "RECORD").write_text("")


GOOD = """
from psymetrics_core import hookimpl

@hookimpl
def register_backends(register):
    register("echo-test", lambda args: None, "a test backend")
"""


def _run(args: list[str], path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(path), **env}
    full.pop("PSYM_LOAD_PLUGINS", None) if "PSYM_LOAD_PLUGINS" not in env else None
    return subprocess.run([*PSYM, *args], capture_output=True, text=True, env=full, timeout=120)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    _write_dist(
        tmp_path, "psymetrics-plugin-broken", "raise ImportError('no module named xyz')\n", "broken"
    )
    _write_dist(tmp_path, "psymetrics-plugin-good", GOOD, "good")
    return tmp_path


def test_broken_plugin_leaves_list_working_with_one_warning(site: Path):
    r = _run(["list", "--json"], site)
    assert r.returncode == 0, r.stderr
    tasks = {row["task"] for row in json.loads(r.stdout)}
    assert {"bfi", "mfq"} <= tasks
    warnings = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(warnings) == 1, r.stderr
    assert "broken" in warnings[0] and "psymetrics-plugin-broken 0.3.1" in warnings[0]
    assert "ImportError: no module named xyz" in warnings[0]
    assert "Traceback" not in r.stderr


def test_plugins_command_lists_failure_with_reason(site: Path):
    r = _run(["plugins", "--json"], site)
    assert r.returncode == 0, r.stderr
    rows = {row["name"]: row for row in json.loads(r.stdout)}
    assert rows["broken"]["status"] == "failed"
    assert "no module named xyz" in rows["broken"]["error"]
    assert rows["good"]["status"] == "ok" and rows["good"]["backends"] == ["echo-test"]
    assert rows["good"]["version"] == "0.3.1"


def test_strict_mode_makes_a_broken_plugin_an_error(site: Path):
    r = _run(["list"], site, PSYM_STRICT_PLUGINS="1")
    assert r.returncode == 1
    assert "plugin 'broken'" in r.stderr and "failed to load" in r.stderr
    assert "Traceback" not in r.stderr


def test_block_list_skips_silently_and_allow_list_limits(site: Path):
    r = _run(["plugins", "--json"], site, PSYM_DISABLE_PLUGINS="broken")
    assert r.returncode == 0 and r.stderr.strip() == ""
    assert {x["name"]: x["status"] for x in json.loads(r.stdout)}["broken"] == "blocked"
    r = _run(["list", "--json"], site, PSYM_LOAD_PLUGINS="bfi")  # the bfi plugin's two tasks
    assert [row["task"] for row in json.loads(r.stdout)] == ["bfi", "bfi10"]


def test_unknown_name_in_allow_list_is_reported(site: Path):
    r = _run(["list", "--json"], site, PSYM_LOAD_PLUGINS="bfi,nosuch")
    assert "PSYM_LOAD_PLUGINS names 'nosuch'" in r.stderr


def test_plugin_with_a_misspelt_hook_is_skipped(tmp_path: Path):
    _write_dist(
        tmp_path,
        "psymetrics-plugin-typo",
        "from psymetrics_core import hookimpl\n\n@hookimpl\ndef render_promt(item):\n    pass\n",
        "typo",
    )
    r = _run(["list", "--json"], tmp_path)
    assert r.returncode == 0
    assert "skipped plugin 'typo'" in r.stderr and "render_promt" in r.stderr


def test_version_and_importing_the_core_stay_light():
    r = subprocess.run([*PSYM, "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "psym, version" in r.stdout
    code = (
        "import sys, psymetrics_core; psymetrics_core.list_instruments(); "
        "print(sorted(m for m in ('torch','transformers','lm_eval') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr
