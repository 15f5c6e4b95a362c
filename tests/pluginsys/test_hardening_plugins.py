"""Issue 14: broken third-party plugins are contained. Each case installs real distributions
(``*.dist-info`` on PYTHONPATH, found by importlib.metadata) and runs the real ``psym``.

Import-time ``SystemExit``/``KeyboardInterrupt``, a ``register_*`` hook that raises or registers
garbage, and two plugins registering the same task or backend name: each is one line (naming
both plugins for a clash) and ``plugins``, ``list``, ``score`` and ``eval`` keep working.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PSYM = [sys.executable, "-m", "psymetrics_core"]
REPO = Path(__file__).resolve().parents[2]
BFI_SPEC = REPO / "plugins" / "psymetrics-plugin-bfi" / "psymetrics_plugin_bfi" / "instruments"


def _write_dist(root: Path, name: str, source: str) -> None:
    mod = name.replace("-", "_")
    (root / f"{mod}.py").write_text(source)
    info = root / f"{mod}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[psymetrics]\n{mod} = {mod}\n")
    (info / "RECORD").write_text("")


HOOK = "from psymetrics_core import hookimpl\n\n@hookimpl\n"
PLUGINS = {
    "sysexit": "import sys\nsys.exit(3)\n",
    "ctrlc": "raise KeyboardInterrupt\n",
    "raises_backends": HOOK + "def register_backends(register):\n    raise RuntimeError('boom')\n",
    "raises_instruments": HOOK
    + "def register_instruments(register):\n    raise ValueError('bad')\n",
    "raises_conditions": HOOK + "def register_conditions(register):\n    1 / 0\n",
    "garbage_backend": HOOK + "def register_backends(register):\n    register(42, 'nope')\n",
    "garbage_instrument": HOOK + "def register_instruments(register):\n    register(3.5)\n",
    "garbage_parser": HOOK + "def register_parsers(register):\n    register('p', None)\n",
    "garbage_condition": HOOK + "def register_conditions(register):\n    register(None, 'x')\n",
    "clash_a": HOOK
    + f"def register_instruments(register):\n    register({str(BFI_SPEC / 'bfi')!r})\n"
    + HOOK.split("\n\n")[1]
    + "def register_backends(register):\n    register('smollm2', lambda a: None, 'fake')\n",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    for name, source in PLUGINS.items():
        _write_dist(root, f"psymetrics-plugin-{name.replace('_', '-')}", source)
    return root


def _run(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("PSYM_LOAD_PLUGINS", None)
    env.pop("PSYM_STRICT_PLUGINS", None)
    return subprocess.run([*PSYM, *args], capture_output=True, text=True, env=env, timeout=180)


def _clean(r: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    return [ln for ln in r.stderr.splitlines() if ln.strip()]


def test_plugins_command_always_works(site: Path) -> None:
    r = _run(site, "plugins", "--json")
    lines = _clean(r)
    assert r.returncode == 0, r.stderr
    for name in ("sysexit", "ctrlc"):
        assert any(f"psymetrics_plugin_{name}" in ln and "skipped" in ln for ln in lines), lines
    assert any("SystemExit" in ln for ln in lines) and any(
        "KeyboardInterrupt" in ln for ln in lines
    )
    rows = {row["name"]: row for row in __import__("json").loads(r.stdout)}
    assert rows["psymetrics_plugin_sysexit"]["status"] == "failed"
    assert rows["psymetrics_plugin_ctrlc"]["error"] == "KeyboardInterrupt"
    assert rows["bfi"]["status"] == "ok" and rows["mfq"]["tasks"] == ["mfq"]
    assert any("register_instruments failed (ValueError: bad)" in ln for ln in lines), lines


def test_list_reports_each_problem_in_one_line_and_keeps_working(site: Path) -> None:
    r = _run(site, "list", "--json")
    lines = _clean(r)
    assert r.returncode == 0, r.stderr
    assert '"bfi"' in r.stdout and '"mfq"' in r.stdout
    joined = "\n".join(lines)
    assert "psymetrics_plugin_raises_instruments" in joined and "ValueError: bad" in joined
    assert "psymetrics_plugin_garbage_instrument" in joined
    clash = [ln for ln in lines if "task id 'bfi'" in ln]
    assert len(clash) == 1 and "psymetrics_plugin_clash_a" in clash[0], lines
    assert "bfi" in clash[0] and clash[0].count("plugin") >= 2


def test_backend_clash_names_both_plugins_and_eval_still_validates(site: Path) -> None:
    r = _run(site, "eval", "--tasks", "bfi", "--model", "no-such", "--output", str(site / "o"))
    lines = _clean(r)
    assert r.returncode == 1
    clash = [ln for ln in lines if "backend 'smollm2'" in ln]
    assert len(clash) == 1 and "psymetrics_plugin_clash_a" in clash[0], lines
    assert "plugin 'hf'" in clash[0]  # smollm2's own plugin, psymetrics-plugin-hf
    assert "psymetrics_plugin_raises_backends" in "\n".join(lines)
    assert "psymetrics_plugin_garbage_backend" in "\n".join(lines)
    assert lines[-1].startswith("psym: error: unknown model backend 'no-such'"), lines


def test_score_works_despite_broken_plugins(site: Path, tmp_path: Path) -> None:
    csv = tmp_path / "r.csv"
    csv.write_text("respondent,item,response\nA,1,3\n")
    r = _run(site, "score", "--task", "bfi", "--responses", str(csv), "--json")
    _clean(r)
    assert r.returncode == 0, r.stderr
    assert '"A"' in r.stdout
