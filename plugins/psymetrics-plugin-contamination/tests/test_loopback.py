"""End to end against an OpenAI-compatible server on loopback (tests/oracle_server.py).

The BFI answer key is built here from the instrument's published key (reverse-keyed items
score 6 - x; the items as full sentences with the stem "I see myself as someone who"), not from
the plugin's code: a perfect model must get AED 0, keyword success 1, macro-F1 1, option-score
MAE 0 and target-score MAE 0; one that ignores reverse keying the analytic 192/220 (Han et al.,
2025; notes §5.4).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from oracle_server import AnswerKey, KeyItem, OracleServer
from psymetrics_plugin_contamination.options import ProbeOptions
from psymetrics_plugin_contamination.run import contamination

from psymetrics_core import get_instrument
from psymetrics_core.api import session_or_default
from psymetrics_core.cli import cli, main

FIVE = "verbatim,keyword,item-dimension,option-score,target-score"
DISTINCT = 347  # distinct requests of the five probes on BFI-44 (see the first test)


def bfi_key() -> AnswerKey:
    inst = get_instrument("bfi")
    labels = [o.label for o in inst.response_scales["default"].options]
    items = []
    for index, it in enumerate(inst.items, start=1):
        text = "I see myself as someone who " + it.text[0].lower() + it.text[1:] + "."
        scores = [6 - v if it.reverse else v for v in range(1, 6)]
        items.append(KeyItem(index, text, it.scales[0].title(), labels, [float(s) for s in scores]))
    return AnswerKey("Big Five Inventory (BFI-44)", items)


def _run(srv: OracleServer, out: Path, *extra: str) -> dict:
    args = [
        "contamination",
        "--tasks",
        "bfi",
        "--probes",
        FIVE,
        "--model",
        "openai-chat",
        "--model-args",
        f"base_url={srv.base_url},model=oracle,concurrency=4",
        "--output",
        str(out),
        "--option",
        "bootstrap=200",
        "--json",
        *extra,
    ]
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads((out / "contamination.json").read_text())


def test_perfect_model_scores_perfectly_and_the_rerun_is_free(tmp_path: Path) -> None:
    with OracleServer([bfi_key()]) as srv:
        rep = _run(srv, tmp_path / "run1")
        n_prompts = srv.requests
        probes = rep["tasks"]["bfi"]["probes"]
        assert probes["verbatim"]["value"] == 0.0
        assert probes["verbatim"]["detail"]["exact_match_rate"] == 1.0
        # BFI items 1, 6, 25 ("Is talkative/reserved/inventive"), 14, 29 ("Can be tense/moody")
        # and 18, 21, 23 ("Tends to be disorganized/quiet/lazy") give identical masked prompts
        # ("I see myself as someone who is [MASK]."): even a perfect model answers only one per
        # group right, so 2 + 1 + 2 = 5 items are lost: success 39/44, the reported ceiling
        kw = probes["keyword"]
        assert kw["value"] == pytest.approx(39 / 44) == kw["baseline"]["ceiling"]
        assert kw["detail"]["ambiguous_items"] == ["1", "6", "14", "18", "21", "23", "25", "29"]
        assert kw["detail"]["unambiguous"]["value"] == 1.0
        assert kw["detail"]["strict"]["value"] == pytest.approx(39 / 44)
        assert probes["item-dimension"]["value"] == 1.0
        assert probes["option-score"]["value"] == 0.0
        assert probes["target-score"]["value"] == 0.0
        for name, pr in probes.items():
            assert pr["ci_low"] is not None and pr["ci_high"] is not None, name
            assert pr["n_parsed"] == pr["n_prompts"], name
        # 44 x (verbatim cued + control, keyword, item-dimension, option-score) + 132 targets,
        # less the 5 keyword prompts identical to another one (asked once, nothing paid twice)
        assert n_prompts == 44 * 5 + 132 - 5 == DISTINCT == rep["cache"]["misses"]
        # the control prompt names a made-up inventory: this server does not know it
        assert probes["verbatim"]["detail"]["control_AED"]["value"] > 0.5
        index = rep["tasks"]["bfi"]["index"]
        assert index["value"] == pytest.approx(1.0)  # keyword relative to its ceiling
        assert index["ci_low"] == pytest.approx(1.0) and index["ci_high"] == pytest.approx(1.0)
        lines = (tmp_path / "run1" / "samples.jsonl").read_text().splitlines()
        assert len(lines) == 44 * 5 + 132  # one line per probe prompt
        # the same command again: every answer from the cache, no request reaches the server
        rep2 = _run(srv, tmp_path / "run2")
        assert srv.requests == n_prompts
        # (the cache counts a hit per prompt: 352, the 5 repeated keyword prompts included)
        assert rep2["cache"] == {**rep2["cache"], "misses": 0, "hits": len(lines)}
        assert rep2["tasks"]["bfi"]["probes"] == rep["tasks"]["bfi"]["probes"]


def test_ignoring_reverse_keying_gives_the_analytic_mae(tmp_path: Path) -> None:
    with OracleServer([bfi_key()], ignore_reverse=True) as srv:
        rep = _run(srv, tmp_path, "--probes", "option-score")
    opt = rep["tasks"]["bfi"]["probes"]["option-score"]
    assert opt["value"] == pytest.approx(192 / 220)  # 0.873
    assert opt["baseline"]["ignore_reverse_keying"] == pytest.approx(192 / 220)
    assert opt["ci_low"] < opt["value"] < opt["ci_high"]


def test_ignoring_reverse_keying_under_score_base_one_matches_its_baseline(
    tmp_path: Path,
) -> None:
    # The server answers every option-score prompt 1..R, i.e. a model that ignores reverse
    # keying in the 1-based coding that score_base=one asks for. MFQ has no reversed item: MAE 0
    # and the baseline 0 (it reported 1.000 before). ASI (0-5, 6 of 22 items reversed): each
    # reversed item costs |6-1|+|5-2|+|4-3| twice = 18 points, 6 x 18 / (22 x 6) = 108/132.
    from test_instruments import key_for

    expected = {"mfq": 0.0, "asi": 108 / 132}
    for task, value in expected.items():
        opts = ProbeOptions(score_base="one", bootstrap=50)
        with OracleServer([key_for(task, opts)], ignore_reverse=True) as srv:
            rep = contamination(
                [task],
                probes=("option-score",),
                model="openai-chat",
                model_args=f"base_url={srv.base_url},model=oracle,concurrency=8",
                options=opts,
                output=tmp_path / task,
                session=session_or_default(),
            )
        opt = rep["tasks"][task]["probes"]["option-score"]
        assert opt["value"] == pytest.approx(value), task
        assert opt["baseline"]["ignore_reverse_keying"] == pytest.approx(value), task


def _levenshtein(a: str, b: str) -> int:
    """Textbook dynamic programme (Wagner-Fischer), independent of the plugin's rapidfuzz."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, start=1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


REFUSAL = (
    "I'm sorry, but I can't reproduce the exact wording of items from the Big Five Inventory. "
    "The BFI-44 is a published psychometric instrument, and its items are protected by "
    "copyright held by its authors; reproducing them verbatim could infringe that copyright. "
) * 4 + "I can describe what the item measures instead, if that helps."  # ~1,100 characters


def test_a_long_refusal_is_scored_whole_and_a_cut_one_is_marked(tmp_path: Path) -> None:
    # Han et al. score refusals as they are (notes §4): a refusal of ~1,100 characters
    # (~280 tokens at 4 characters a token) fits the default budget of 512 tokens whole; the
    # old 64-token budget cuts it at 256 characters, and every cut answer is marked.
    assert 1000 < len(REFUSAL) < 512 * 4
    key = bfi_key()
    reps = {}
    with OracleServer([key], refusal=REFUSAL) as srv:
        for name, extra in (("whole", {}), ("cut", {"max_new_tokens_verbatim": 64})):
            reps[name] = contamination(
                ["bfi"],
                probes=("verbatim",),
                model="openai-chat",
                model_args=f"base_url={srv.base_url},model=oracle,concurrency=4",
                options=ProbeOptions(bootstrap=50, verbatim_control="none", **extra),  # type: ignore[arg-type]
                limit=4,
                output=tmp_path / name,
                session=session_or_default(),
            )
    items = [it.text for it in key.items[:4]]
    length = sum(len(t) for t in items)
    for name, answer, n_cut in (("whole", REFUSAL, 0), ("cut", REFUSAL[:256], 4)):
        vb = reps[name]["tasks"]["bfi"]["probes"]["verbatim"]
        expected = sum(_levenshtein(t, answer) for t in items) / length
        assert vb["value"] == pytest.approx(expected), name
        assert vb["n_truncated"] == n_cut and vb["n_truncation_unknown"] == 0, name
        text = (tmp_path / name / "samples.jsonl").read_text()
        lines = [json.loads(x) for x in text.splitlines()]
        assert [x["data"]["truncated"] for x in lines] == [n_cut > 0] * 4, name
    assert reps["whole"]["tasks"]["bfi"]["probes"]["verbatim"]["value"] > 15  # the long refusal
    flags = reps["cut"]["tasks"]["bfi"]["probes"]["verbatim"]["flags"]
    assert "4 of 4 answers hit the budget of 64 tokens" in " ".join(flags)
    assert "budget" not in " ".join(reps["whole"]["tasks"]["bfi"]["probes"]["verbatim"]["flags"])


# the killed run probes the first 10 BFI items: 10 x (verbatim cued + control, keyword,
# item-dimension, option-score) + 30 targets, less item 6's keyword prompt (item 1's: "Is [MASK]")
KILL_LIMIT = 10
KILL_DISTINCT = 10 * 5 + 30 - 1


def test_killed_run_resumes_without_repeating_finished_prompts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real ``psym contamination`` process killed half-way (SIGKILL); the refused re-run and
    the ``--resume`` run are ``psym``'s ``main`` in this process, on the same run directory."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with OracleServer([bfi_key()], latency=0.02) as srv:
        args = [
            "contamination",
            "--tasks",
            "bfi",
            "--limit",
            str(KILL_LIMIT),
            "--probes",
            FIVE,
            "--model",
            "openai-chat",
            "--model-args",
            f"base_url={srv.base_url},model=oracle,concurrency=1",
            "--output",
            str(tmp_path / "run"),
            "--option",
            "bootstrap=50",
        ]
        cmd = [sys.executable, "-m", "psymetrics_core", *args]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while srv.requests < 40 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        asked_before = srv.requests  # one request per distinct prompt (concurrency 1)
        assert 25 <= asked_before < KILL_DISTINCT  # killed half-way
        assert all(n == 1 for n in srv.counts.values())
        last = srv.completed[-1] if srv.completed else None
        capsys.readouterr()
        with pytest.raises(SystemExit) as again:
            main(args)
        assert again.value.code == 1  # no overwrite
        assert "already holds a run" in capsys.readouterr().err
        assert srv.requests == asked_before
        main([*args, "--resume"])
        repeated = [p for p, n in srv.counts.items() if n > 1]
        # nothing whose answer reached the client before the kill is asked again; at most the
        # one request in flight at the kill (its answer may never have been read) is repeated
        assert len(repeated) <= 1
        assert not repeated or repeated[0] in (last, list(srv.counts)[asked_before - 1])
        asked_after = srv.requests - asked_before
        assert asked_after == KILL_DISTINCT - asked_before + len(repeated)
        assert len(srv.counts) == KILL_DISTINCT  # every prompt was answered overall
        print(f"killed after {asked_before} requests; resumed run asked {asked_after}")
    rep = json.loads((tmp_path / "run" / "contamination.json").read_text())
    assert rep["tasks"]["bfi"]["probes"]["option-score"]["value"] == 0.0
    assert rep["cache"]["misses"] == asked_after


def test_order_test_through_completions_echo_logprobs(tmp_path: Path) -> None:
    # benchmarks/latency_server.py echoes prompt logprobs (one token per character, each a hash
    # of the text before it): the order test must sum exactly the continuation's characters
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from benchmarks.latency_server import LatencyServer, _h

    with LatencyServer(latency=0.0) as srv:
        args = [
            "contamination",
            "--tasks",
            "bfi",
            "--limit",
            "5",
            "--probes",
            "order",
            "--permutations",
            "5",
            "--model",
            "openai-completions",
            "--model-args",
            f"base_url={srv.base_url},model=m",
            "--output",
            str(tmp_path),
            "--json",
        ]
        res = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert res.exit_code == 0, res.output
        assert srv.requests == 4 * 6  # bfi + 3 controls, canonical + 5 permutations each
    order = json.loads((tmp_path / "contamination.json").read_text())["tasks"]["bfi"]["probes"]
    samples = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    metas = [s["item_meta"]["meta"] for s in samples]
    canon = next(
        s
        for s, m in zip(samples, metas, strict=True)
        if m["unit"] == "bfi" and m["condition"] == "canonical"
    )
    ctx = canon["rendered_prompt"]
    prompt = ctx + canon["prompt"]["options"][0]["continuation"]
    expected = sum(-((_h(prompt[: i + 1]) % 1000) / 100.0) for i in range(len(ctx), len(prompt)))
    assert canon["data"]["loglik"] == pytest.approx(expected)
    assert order["order"]["detail"]["canonical_loglik"] == pytest.approx(expected)
    assert set(order["order"]["detail"]["positive_controls"]) == {"months", "planets", "weekdays"}
