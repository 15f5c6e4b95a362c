"""Issue 14 follow-up: run-directory protection in the library layer (evaluate, the plan runner)
and a third-party hook that raises during a run (one line naming plugin and hook, no traceback)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pluggy
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from behaviour_fakes import ScriptedBackend  # noqa: E402

from psymetrics_core import evaluate  # noqa: E402
from psymetrics_core.base.errors import PsymError  # noqa: E402
from psymetrics_core.pluginsys.loader import make_plugin_manager  # noqa: E402
from psymetrics_core.pluginsys.session import Session  # noqa: E402
from psymetrics_core.records.rundir import LOCK_NAME, claim_run_dir  # noqa: E402

hookimpl = pluggy.HookimplMarker("psymetrics")


def _answer(_text: str) -> str:
    return "3"


def test_library_evaluate_refuses_an_existing_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    evaluate(["bfi"], backend=ScriptedBackend(_answer), limit=2, output=out)
    before = (out / "results.json").read_bytes()
    with pytest.raises(PsymError, match="already holds a run"):
        evaluate(["bfi"], backend=ScriptedBackend(_answer), limit=3, output=out)
    assert (out / "results.json").read_bytes() == before  # not overwritten
    res = evaluate(["bfi"], backend=ScriptedBackend(_answer), limit=3, output=out, overwrite=True)
    assert json.loads((out / "results.json").read_text())["limit"] == 3 == res["limit"]
    evaluate(["bfi"], backend=ScriptedBackend(_answer), limit=3, output=out, resume=True)


def test_library_evaluate_stops_when_another_run_holds_the_directory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    import fcntl

    with (out / LOCK_NAME).open("a+") as fh:  # another process's lock (a separate open file)
        fh.write("4242")
        fh.flush()
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(PsymError, match="in use by another psym run"):
            evaluate(["bfi"], backend=ScriptedBackend(_answer), limit=2, output=out)
    assert not (out / "results.json").exists()


def test_library_evaluate_failure_leaves_no_empty_directory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with pytest.raises(PsymError):
        evaluate(["no-such-task"], backend=ScriptedBackend(_answer), output=out)
    assert not out.exists()


def test_a_held_claim_is_handed_on_not_claimed_again(tmp_path: Path) -> None:
    """The run directory is claimed once: a caller holding it passes its claim as ``run_dir``;
    a second claim of it, even in this process, is refused (no process-wide claim map)."""
    out = tmp_path / "run"
    with claim_run_dir(out) as held:
        res = evaluate(["bfi"], backend=ScriptedBackend(_answer), limit=2, output=out, run_dir=held)
        assert res["tasks"]["bfi"]["n_items"] == 2
        with pytest.raises(PsymError, match="in use by another psym run"):
            evaluate(["bfi"], backend=ScriptedBackend(_answer), limit=2, output=out, resume=True)
        with pytest.raises(PsymError, match="is not the run's output"):
            evaluate(["bfi"], backend=ScriptedBackend(_answer), output=tmp_path / "b", run_dir=held)


def test_plan_runner_locks_its_shard_and_still_resumes(tmp_path: Path, fresh_plugins) -> None:
    import fcntl

    from psymetrics_core.study.plan import PlanSettings, build_plan
    from psymetrics_core.study.shard import run_plan

    plan = build_plan(PlanSettings.of(tasks=("bfi",), limit=2), fresh_plugins)
    kw = {"backend": ScriptedBackend(_answer), "cache": False, "session": fresh_plugins}
    out = tmp_path / "shard"
    out.mkdir()
    with (out / LOCK_NAME).open("a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(PsymError, match="in use by another psym run"):
            run_plan(plan, out, **kw)
    # an empty directory (only the lock file) is still usable; a killed shard is run again
    rec = run_plan(plan, out, **kw)
    assert rec["complete"]
    rec["complete"] = False
    (out / "shard.json").write_text(json.dumps(rec))
    again = run_plan(plan, out, **kw)
    assert again["complete"]


class _Broken:
    """A third-party plugin whose parse_response raises."""

    @hookimpl(tryfirst=True)
    def parse_response(self, instrument, item, prompt, completion):  # type: ignore[no-untyped-def]
        if instrument.id == "bfi" and item.id == "3":
            raise ZeroDivisionError("boom")
        return None


def test_raising_hook_is_one_line_naming_plugin_and_hook(tmp_path: Path) -> None:
    pm, records = make_plugin_manager(autoload=True)
    session = Session(pm, records)
    session.pm.register(_Broken(), name="broken-parser")
    out = tmp_path / "run"
    with pytest.raises(PsymError) as info:
        evaluate(["bfi"], backend=ScriptedBackend(_answer), limit=5, output=out, session=session)
    msg = str(info.value)
    assert "\n" not in msg
    assert "broken-parser" in msg and "parse_response" in msg and "ZeroDivisionError" in msg
    # answers already received are kept in samples.jsonl
    lines = (out / "samples.jsonl").read_text().splitlines()
    assert len(lines) >= 2
    assert not (out / "results.json").exists()


def _broken_scorer_dist(tmp_path: Path) -> Path:
    """A site folder holding an installed (dist-info) plugin whose ``score`` hook raises."""
    site = tmp_path / "site"
    pkg = site / "psym_broken_scorer"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "import pluggy\nhookimpl = pluggy.HookimplMarker('psymetrics')\n"
        "@hookimpl(tryfirst=True)\n"
        "def score(instrument, responses, form, answers):\n"
        "    if any(v is not None for v in responses.values()):  # real answers, not a dry run\n"
        "        raise KeyError('scale')\n"
    )
    dist = site / "psym_broken_scorer-0.3.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: psym-broken-scorer\nVersion: 0.3\n"
    )
    (dist / "RECORD").write_text("psym_broken_scorer/__init__.py,,\n")
    (dist / "top_level.txt").write_text("psym_broken_scorer\n")
    (dist / "entry_points.txt").write_text("[psymetrics]\nbroken = psym_broken_scorer\n")
    return site


def test_raising_hook_from_an_installed_distribution_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _broken_scorer_dist(tmp_path)
    monkeypatch.syspath_prepend(str(site))
    import importlib

    importlib.invalidate_caches()
    pm, records = make_plugin_manager(autoload=True)
    session = Session(pm, records)
    assert isinstance(session.pm.get_plugin("broken"), types.ModuleType)
    out = tmp_path / "run"
    with pytest.raises(PsymError) as info:
        evaluate(["bfi"], backend=ScriptedBackend(_answer), limit=3, output=out, session=session)
    msg = str(info.value)
    assert "\n" not in msg
    assert "'broken'" in msg and "psym-broken-scorer" in msg and "score" in msg
    assert len((out / "samples.jsonl").read_text().splitlines()) == 3


def test_contamination_library_refuses_an_existing_run(fresh_plugins, tmp_path: Path) -> None:
    pytest.importorskip("psymetrics_plugin_contamination")
    from psymetrics_plugin_contamination.run import contamination

    out = tmp_path / "run"
    kw = {"probes": ("option-score",), "limit": 2, "cache": False, "output": out}
    kw["session"] = fresh_plugins
    contamination(["bfi"], backend=ScriptedBackend(_answer), **kw)  # type: ignore[arg-type]
    before = (out / "contamination.json").read_bytes()
    with pytest.raises(PsymError, match="already holds a run"):
        contamination(["bfi"], backend=ScriptedBackend(_answer), **kw)  # type: ignore[arg-type]
    assert (out / "contamination.json").read_bytes() == before
    contamination(["bfi"], backend=ScriptedBackend(_answer), overwrite=True, **kw)  # type: ignore[arg-type]


def test_cli_run_with_a_raising_plugin_hook_is_one_line_and_keeps_responses(
    tmp_path: Path,
) -> None:
    """The real `psym eval` in a subprocess, the broken distribution installed on its path and a
    loopback OpenAI-compatible server: exit 1, one `psym:` line, no traceback, responses cached."""
    import os
    import subprocess

    from benchmarks.latency_server import LatencyServer

    site = _broken_scorer_dist(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(site), "PSYM_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PSYM_DEBUG", None)
    out = tmp_path / "run"
    with LatencyServer(latency=0.0) as srv:
        cmd = [
            sys.executable,
            "-m",
            "psymetrics_core",
            "eval",
            "--tasks",
            "bfi",
            "--limit",
            "3",
            "--model",
            "openai-chat",
            "--model-args",
            f"base_url={srv.base_url},model=stub",
            "--output",
            str(out),
        ]
        res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 1, res.stderr
        assert "Traceback" not in res.stderr
        lines = [ln for ln in res.stderr.splitlines() if ln.startswith("psym:")]
        assert len(lines) == 1, res.stderr
        assert "'broken'" in lines[0] and "psym-broken-scorer 0.3" in lines[0]
        assert "score hook" in lines[0]
        assert srv.requests == 3, res.stderr
        assert len((out / "samples.jsonl").read_text().splitlines()) == 3
        # nothing paid twice: a resumed run (the plugin still broken) asks the server nothing
        res = subprocess.run(
            [*cmd, "--resume"], env=env, capture_output=True, text=True, timeout=300
        )
        assert res.returncode == 1 and srv.requests == 3
