"""``psym import logprobs``: log-probabilities scored elsewhere become an ordinary run.

The expected profile below is worked out by hand from the tags printed in holi-lab/ValuePortrait's
query-response-tagged.json (scenarios 1025 and 1009) and the made-up log-probabilities of the CSV.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.cli import cli
from psymetrics_core.pluginsys.session import Session

LOGPROBS = {  # scenario -> response -> (summed log-probability, tokens)
    "1025": {1: (-10.0, 5), 2: (-20.0, 10), 3: (-30.0, 10), 4: (-40.0, 8), 5: (-50.0, 25)},
    "1009": {1: (-12.0, 4), 2: (-14.0, 7), 3: (-16.0, 8), 4: (-18.0, 9), 5: (-20.0, 10)},
}


@pytest.fixture(scope="module")
def session() -> Session:
    import psymetrics_plugin_value_portrait as vp

    s = Session()
    if "value-portrait" not in s.instruments():
        s.register(vp, name="value-portrait")
    return s


def _csv(path: Path) -> Path:
    lines = ["scenario,response,logprob,tokens"]
    for sid, pairs in LOGPROBS.items():
        lines += [f"{sid},{rid},{lp},{n}" for rid, (lp, n) in pairs.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _tags(session: Session) -> dict[tuple[int, int], dict[str, float]]:
    from psymetrics_plugin_value_portrait.data import scenarios

    return {(s.id, r.id): r.tags for s in scenarios() if str(s.id) in LOGPROBS for r in s.responses}


def _run(session: Session, *args: str):
    return CliRunner().invoke(cli, ["import", "logprobs", *args], obj=session)


def test_the_imported_run_is_an_ordinary_run_with_the_hand_computed_profile(session, tmp_path):
    src = _csv(tmp_path / "scores.csv")
    out = tmp_path / "run"
    res = _run(
        session, str(src), "--task", "value-portrait", "--model", "Qwen-test", "-o", str(out)
    )
    assert res.exit_code == 0, res.output
    results = json.loads((out / "results.json").read_text())
    entry = results["tasks"]["value-portrait"]
    assert results["model"] == "Qwen-test" and results["backend"]["backend"] == "import"
    assert entry["n_items"] == 104 and entry["n_answered"] == 2 and entry["length"] == "sum"
    # the rule applied to the shipped tags (the hand-worked values: test_the_profile_by_hand)
    tags = _tags(session)
    for construct, s in entry["scales"].items():
        per = []
        for sid, pairs in LOGPROBS.items():
            vals = [lp for rid, (lp, _) in pairs.items() if tags[int(sid), rid][construct] >= 0.3]
            if vals:
                per.append(sum(vals) / len(vals))
        if per:
            assert s["score"] == pytest.approx(sum(per) / len(per)), construct
        else:
            assert s["score"] is None and s["reason"], construct
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    got = {x["item"]: x["data"] for x in samples if x["parse_status"] == "ok"}
    assert got["1009"]["tokens"] == {"1": 4, "2": 7, "3": 8, "4": 9, "5": 10}
    assert len(samples) == 104 and "imported 2 of 104 scenarios" in res.output


def test_the_profile_by_hand(session, tmp_path):
    """Tags >= 0.3 in the data set for these two scenarios (as printed in the JSON): 1025 r5
    conservation 0.377; 1009 r1 agreeableness 0.362 (its power tag is 0.29995: left out), r2
    tradition 0.324, r3 power 0.319, achievement 0.316, self_enhancement 0.358, r5
    agreeableness 0.329. Nothing else reaches 0.3."""
    src = _csv(tmp_path / "scores.csv")
    out = tmp_path / "run"
    res = _run(session, str(src), "--task", "value-portrait", "--model", "m", "-o", str(out))
    assert res.exit_code == 0, res.output
    scales = json.loads((out / "results.json").read_text())["tasks"]["value-portrait"]["scales"]
    want = {
        "conservation": -50.0,
        "agreeableness": (-12.0 + -20.0) / 2,
        "tradition": -14.0,
        "power": -16.0,
        "achievement": -16.0,
        "self_enhancement": -16.0,
    }
    assert {k: s["score"] for k, s in scales.items() if s["score"] is not None} == want
    assert scales["hedonism"]["reason"] == "no scored response has a hedonism tag >= 0.3"


def test_per_token_mean_is_a_task_option_recorded_in_the_run(session, tmp_path):
    src = _csv(tmp_path / "scores.csv")
    out = tmp_path / "run"
    res = _run(
        session,
        str(src),
        "--task",
        "value-portrait",
        "--model",
        "m",
        "-o",
        str(out),
        "--task-arg",
        "value-portrait.length=mean",
    )
    assert res.exit_code == 0, res.output
    entry = json.loads((out / "results.json").read_text())["tasks"]["value-portrait"]
    assert entry["length"] == "mean" and entry["options"] == {"length": "mean"}
    assert "per-token mean" in res.output


def test_a_questionnaire_is_refused_and_nothing_is_written(session, tmp_path):
    src = _csv(tmp_path / "scores.csv")
    res = _run(session, str(src), "--task", "bfi", "--model", "m", "-o", str(tmp_path / "run"))
    assert res.exit_code == 1 and "score continuations" in str(res.exception)
    assert not (tmp_path / "run").exists()


def test_the_output_never_replaces_the_input(session, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    src = _csv(run / "samples.jsonl")
    before = src.read_bytes()
    res = _run(session, str(src), "--task", "value-portrait", "--model", "m", "-o", str(run))
    assert res.exit_code == 1 and "would replace the input" in str(res.exception)
    assert src.read_bytes() == before
