"""``psym score`` for free-text and judged tasks, and ``psym show`` listing every item.

Issue 10 item 9: a run's samples.jsonl re-scores to the run's own results (real SmolLM2 run);
CSV/JSONL generations with respondents; judged tasks call the judge through the cache.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from behaviour_fakes import ScriptedBackend
from click.testing import CliRunner
from psym_inprocess import psym_main
from psymetrics_plugin_moral_advice.dilemmas import builtin_dilemmas

from psymetrics_core import hookimpl
from psymetrics_core.cli import cli
from psymetrics_core.pluginsys.session import Session


def _psym(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "psymetrics_core", *args], capture_output=True, text=True
    )


@pytest.mark.model
def test_samples_of_a_real_run_rescore_to_its_results(fresh_plugins, smollm2, tmp_path):
    from psymetrics_core.administer.runner import evaluate

    run = tmp_path / "run"
    # min_count=0: report sexism from these 4 short letters (the default withholds it below
    # 5 words per cell), so the re-score is compared on a number, not on null. The run is
    # ``psym eval``'s (response cache on) on the session's loaded model; the re-score is psym's
    # main in this process (test_score_input_errors_are_one_line runs the console script)
    options = {"refletter": {"min_count": "0"}}
    evaluate(
        ["refletter"],
        backend=smollm2,
        session=fresh_plugins,
        cache=True,
        limit=4,
        max_new_tokens=48,
        task_options=options,
        output=run,
    )
    results = json.loads((run / "results.json").read_text())
    expected = {k: v["score"] for k, v in results["tasks"]["refletter"]["scales"].items()}
    args = ["score", "--task", "refletter", "--responses", run / "samples.jsonl"]
    r = psym_main([*args, "--task-arg", "refletter.min_count=0", "--json"], session=Session())
    assert r.returncode == 0, r.stderr[-500:]
    assert json.loads(r.stdout) == {"refletter": {"original/repeat0": expected}}
    assert expected["sexism"] is not None  # 2 female + 2 male letters, smoothed ORs


def test_score_csv_generations_per_respondent_by_hand(tmp_path):
    from psymetrics_plugin_refletter import letter_scores

    f = tmp_path / "letters.csv"
    f.write_text(
        "respondent,item,text\n"
        'a,f-20-student,"She is warm, kind and helpful."\n'
        'a,m-20-student,"He is a brilliant, outstanding leader."\n'
        'b,f-20-student,"Kelly is a brilliant student."\n'
        'b,m-20-student,"Joseph is kind."\n'
    )
    r = CliRunner().invoke(cli, ["score", "--task", "refletter", "--responses", str(f), "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)["refletter"]
    want_a = letter_scores(
        {
            "female": ["She is warm, kind and helpful."],
            "male": ["He is a brilliant, outstanding leader."],
        }
    )
    assert set(got) == {"a", "b"}
    assert got["a"]["sexism"] == pytest.approx(want_a["sexism"])
    assert got["a"]["agentic"] == pytest.approx(want_a["odds_ratios"]["agentic"]["or"])


def _score_here(capsys, *args: str) -> tuple[int, str]:
    """``psym score ARGS`` in this process: its exit status and stderr."""
    from psymetrics_core.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["score", *args])
    return exc.value.code, capsys.readouterr().err


def test_score_input_errors_are_one_line(tmp_path, capsys):
    # the console script: exit 1 and one line, no traceback
    bad = tmp_path / "x.csv"
    bad.write_text("item,letter\nf-20-student,hi\n")
    r = _psym("score", "--task", "refletter", "--responses", str(bad))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert (
        r.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "x.csv, line 1: missing column(s) text (expected columns: item, text and optionally "
            "respondent)"
        )
    )
    # the other malformed files through the same main(), in this process
    bad.write_text("item,text\nnope,hi\n")
    code, err = _score_here(capsys, "--task", "refletter", "--responses", str(bad))
    assert code == 1 and "Traceback" not in err
    assert "x.csv, line 2: item 'nope' is not an item of task 'refletter'" in err
    jl = tmp_path / "x.jsonl"
    jl.write_text('{"item": "f-20-student", "text": "ok"}\n{"item": 3\n')
    code, err = _score_here(capsys, "--task", "refletter", "--responses", str(jl))
    assert code == 1 and "x.jsonl, line 2: not valid JSON" in err


def test_show_lists_every_item_with_id_and_text(tmp_path):
    r = CliRunner().invoke(cli, ["show", "refletter", "--json"])
    info = json.loads(r.output)
    assert info["kind"] == "free_text" and info["n_items"] == 48
    assert info["items"][0]["id"] == "f-20-student"
    assert info["items"][0]["text"].startswith("Generate a detailed reference letter for Kelly")
    r = CliRunner().invoke(cli, ["show", "housing", "--json"])
    assert json.loads(r.output)["items"] == [] and "needs its neighbourhood table" in r.output
    table = tmp_path / "t.csv"
    table.write_text("city,neighborhood,opportunity_index\nA,X,1\nA,Y,2\n")
    r = CliRunner().invoke(cli, ["show", "housing", "--data", str(table), "--json"])
    assert len(json.loads(r.output)["items"]) == 5 * 2 * 2  # lists x rent/buy x race
    r = CliRunner().invoke(cli, ["show", "bfi", "--json"])
    assert len(json.loads(r.output)["items"]) == 44


def test_judged_task_scores_with_the_judge_through_the_cache(fresh_plugins, tmp_path, monkeypatch):
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    judge = ScriptedBackend(lambda t: '{"explanation": "it does", "option": "yes"}')
    judge.name = "scripted-judge"

    class Judge:
        @hookimpl
        def register_backends(self, register):
            register("scripted-judge", lambda args: judge)

    fresh_plugins.register(Judge(), name="test-judge")
    f = tmp_path / "advice.jsonl"
    rows = [{"item": d.id, "text": "Do it."} for d in builtin_dilemmas()]
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    args = ["score", "--task", "moral-advice", "--responses", str(f), "--json"]
    r = CliRunner().invoke(cli, args, obj=fresh_plugins)
    assert "name the judge with --judge-model" in str(r.exception)
    r = CliRunner().invoke(cli, [*args, "--judge-model", "scripted-judge"], obj=fresh_plugins)
    assert r.exit_code == 0, r.output
    scores = json.loads(r.output)["moral-advice"]["all"]
    # judge always "yes": aligned where the action is pro-foundation (Table 4: not care, loyalty)
    assert scores == {"care": 0.0, "fairness": 1.0, "loyalty": 0.0, "authority": 1.0, "purity": 1.0}
    assert len(judge.seen) == 5
    r = CliRunner().invoke(cli, [*args, "--judge-model", "scripted-judge"], obj=fresh_plugins)
    assert json.loads(r.output)["moral-advice"]["all"] == scores
    assert len(judge.seen) == 5  # the second scoring was answered from the cache
