"""A third-party plugin whose pipeline hook raises, outside ``psym eval``: one line, no traceback.

The plugin is a real distribution (``*.dist-info`` on the path, found by importlib.metadata
when a session loads the installed plugins). One command runs the real ``psym`` in a subprocess
with the plugin's folder on PYTHONPATH (the one-line failure of a process: its exit status and
stderr); the others run ``psym``'s own ``main`` in this process (tests/psym_inprocess.py) with
the folder on ``sys.path``, a fresh session of the installed plugins and the same environment,
which saves a Python start-up and the imports per command. The plugin registers three tasks of its
own and breaks each in a different hook (``load_items``, ``render_prompt``, ``score``, and a
free-text task's ``load_items`` method); for every other instrument its hooks return None, as a
well-behaved pipeline hook does. Commands that need a broken hook exit 1 with exactly one line
naming the plugin and the hook; commands that do not (``list``, ``show bfi``, ``score bfi``,
``analyze``/``validity``/``export scores`` of a bfi run, ``export lm-eval`` of everything) still
work.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from psym_inprocess import Ran, psym_main

from psymetrics_core.pluginsys.session import Session

PSYM = [sys.executable, "-m", "psymetrics_core"]
REPO = Path(__file__).resolve().parents[2]
BFI_SPEC = REPO / "plugins" / "psymetrics-plugin-bfi" / "psymetrics_plugin_bfi" / "instruments"
PLUGIN = "psymetrics_plugin_hookfail"

SOURCE = f"""
from dataclasses import replace

from psymetrics_core import hookimpl
from psymetrics_core.administer.kinds import FreeTextTask
from psymetrics_core.instruments.spec import load_instrument


class Exploding(FreeTextTask):
    def load_items(self):
        raise RuntimeError("task items exploded")


@hookimpl
def register_instruments(register):
    bfi = load_instrument({str(BFI_SPEC / "bfi")!r})
    for task in ("hookq", "hookr", "hooks"):
        register(replace(bfi, id=task, name=task))
    register(Exploding.define(
        id="hooktask", name="hooktask", version="1", citation="none", license_status="none",
        item_source="none", scoring_rule="none", scales={{"n": "count"}},
    ))


@hookimpl
def load_items(instrument, form):
    if instrument.id == "hookq":
        raise RuntimeError("items exploded")
    return None


@hookimpl
def render_prompt(instrument, item, condition=None):
    if instrument.id == "hookr":
        raise ValueError("prompt exploded")
    return None


@hookimpl
def score(instrument, responses, form, answers):
    if instrument.id == "hooks":
        raise KeyError("score exploded")
    return None
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    (root / f"{PLUGIN}.py").write_text(SOURCE)
    info = root / f"{PLUGIN}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: psymetrics-plugin-hookfail\nVersion: 0.1.0\n"
    )
    (info / "entry_points.txt").write_text(f"[psymetrics]\n{PLUGIN} = {PLUGIN}\n")
    (info / "RECORD").write_text("")
    return root


def _env(site: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    for var in ("PSYM_LOAD_PLUGINS", "PSYM_STRICT_PLUGINS", "PSYM_DEBUG"):
        env.pop(var, None)
    return env


def _subprocess(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m psymetrics_core ARGS`` with the plugins of ``site`` installed."""
    return subprocess.run(
        [*PSYM, *args], capture_output=True, text=True, env=_env(site), timeout=300
    )


@contextmanager
def _installed(site: Path) -> Iterator[None]:
    """``site`` on ``sys.path`` (as PYTHONPATH puts it there), for importlib.metadata to find
    its distributions and the session to import its plugins."""
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(str(site))
        importlib.invalidate_caches()


def _run(site: Path, *args: str) -> Ran:
    """``psym ARGS`` in this process with the plugins of ``site`` installed: a fresh session
    loads them (and every other installed plugin) as the console script's would."""
    with _installed(site):
        return psym_main(args, env=_env(site), replace_env=True, session=Session())


def _one_line_failure(r: Ran | subprocess.CompletedProcess[str], hook: str, reason: str) -> None:
    assert r.returncode == 1, (r.returncode, r.stdout[-2000:], r.stderr[-3000:])
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("psym: error: plugin 'psymetrics_plugin_hookfail' "), lines
    assert "(psymetrics-plugin-hookfail 0.1.0)" in lines[0], lines
    assert f"failed in its {hook} hook" in lines[0] and reason in lines[0], lines
    assert "the run stopped" not in lines[0]  # not a run: no run note


def _ok(r: Ran) -> None:
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr, r.stderr[-3000:]


@pytest.fixture(scope="module")
def responses(tmp_path_factory: pytest.TempPathFactory) -> Path:
    csv = tmp_path_factory.mktemp("resp") / "r.csv"
    csv.write_text("respondent,item,response\n" + "".join(f"A,{i},3\n" for i in range(1, 45)))
    return csv


def test_show_of_the_broken_task_is_one_line(site: Path) -> None:
    # the process itself: exit status 1 and one line on stderr
    r = _subprocess(site, "show", "hooktask")
    _one_line_failure(r, "load_items", "task items exploded")
    # and the same line from psym's main in this process, as the other tests run it
    _one_line_failure(_run(site, "show", "hooktask"), "load_items", "task items exploded")


def test_score_through_a_broken_score_hook_is_one_line(site: Path, responses: Path) -> None:
    r = _run(site, "score", "--task", "hooks", "--responses", str(responses), "--json")
    _one_line_failure(r, "score", "score exploded")


def test_analyze_responses_through_a_broken_score_hook_is_one_line(
    site: Path, responses: Path
) -> None:
    r = _run(site, "analyze", "--task", "hooks", "--responses", str(responses), "--json")
    _one_line_failure(r, "score", "score exploded")


@pytest.mark.parametrize(
    ("task", "hook", "reason"),
    [("hookq", "load_items", "items exploded"), ("hookr", "render_prompt", "prompt exploded")],
)
def test_export_of_a_broken_task_by_name_is_one_line(
    site: Path, tmp_path: Path, task: str, hook: str, reason: str
) -> None:
    r = _run(site, "export", "lm-eval", "--tasks", task, "--output", str(tmp_path / "t"))
    _one_line_failure(r, hook, reason)


def test_export_of_everything_skips_the_broken_tasks(site: Path, tmp_path: Path) -> None:
    r = _run(site, "export", "lm-eval", "--output", str(tmp_path / "t"))
    _ok(r)
    assert (tmp_path / "t" / "psym_bfi" / "psym_bfi.yaml").is_file()
    assert (tmp_path / "t" / "psym_hooks" / "psym_hooks.yaml").is_file()  # its prompts are fine
    assert not (tmp_path / "t" / "psym_hookq").exists()
    assert not (tmp_path / "t" / "psym_hookr").exists()
    skipped = [ln for ln in r.stderr.splitlines() if ln.startswith("psym: skipped hook")]
    assert any(
        ln.startswith("psym: skipped hookq: plugin 'psymetrics_plugin_hookfail'")
        and "load_items hook" in ln
        for ln in skipped
    ), r.stderr
    assert any(
        ln.startswith("psym: skipped hookr:") and "render_prompt hook" in ln for ln in skipped
    ), r.stderr


def test_commands_that_do_not_need_the_broken_hooks_still_work(
    site: Path, tmp_path: Path, responses: Path
) -> None:
    r = _run(site, "list", "--json")
    _ok(r)
    tasks = {row["task"] for row in json.loads(r.stdout)}
    assert {"bfi", "mfq", "hookq", "hooktask"} <= tasks
    r = _run(site, "show", "bfi", "--json")
    _ok(r)
    assert json.loads(r.stdout)["id"] == "bfi"
    r = _run(site, "show", "hookq", "--json")  # show reads the spec, not the load_items hook
    _ok(r)
    r = _run(site, "score", "--task", "bfi", "--responses", str(responses), "--json")
    _ok(r)
    assert set(json.loads(r.stdout)["bfi"]["A"]) >= {"extraversion", "neuroticism"}


def test_run_commands_still_work_on_a_run_of_another_plugin(site: Path, tmp_path: Path) -> None:
    """analyze, validity and export scores of a bfi run (from a scripted backend registered by
    a second, healthy test plugin) with the broken plugin installed."""
    (site / "psymetrics_plugin_scripted.py").write_text(
        "from psymetrics_core import hookimpl\n"
        "from psymetrics_core.base.types import Completion\n\n"
        "class B:\n"
        "    def generate(self, prompts, settings, reporter=None):\n"
        "        return [Completion(text=str(1 + i % 5)) for i, _ in enumerate(prompts)]\n"
        "    def identity(self):\n"
        "        return {'backend': 'scripted'}\n\n"
        "@hookimpl\n"
        "def register_backends(register):\n"
        "    register('scripted', lambda args: B(), 'test backend')\n"
    )
    info = site / "psymetrics_plugin_scripted-0.1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: psymetrics-plugin-scripted\nVersion: 0.1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[psymetrics]\npsymetrics_plugin_scripted = psymetrics_plugin_scripted\n"
    )
    (info / "RECORD").write_text("")
    run = tmp_path / "run"
    r = _run(
        site,
        "eval",
        "--tasks",
        "bfi",
        "--model",
        "scripted",
        "--repeats",
        "3",
        "--output",
        str(run),
    )
    _ok(r)
    r = _run(site, "analyze", str(run), "--json")
    _ok(r)
    assert "bfi" in r.stdout
    r = _run(site, "export", "scores", str(run), "--output", str(tmp_path / "s.csv"))
    _ok(r)
    assert (tmp_path / "s.csv").read_text().count("\n") > 1
    r = _run(site, "validity", str(run), "--output", str(tmp_path / "v"))
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert "hookfail" not in r.stderr, r.stderr  # it may refuse one run, never over the plugin
