"""The value-portrait task: the shipped data as the data set has it, and the profile rule on a
small fixture whose scores are worked out by hand below."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from psymetrics_plugin_value_portrait import make_instrument
from psymetrics_plugin_value_portrait.data import CONSTRUCTS, scenarios
from psymetrics_plugin_value_portrait.profile import ScoredResponse, profile

from psymetrics_core.api import Completion, PsymError, TaskResults


def test_the_shipped_data_is_the_data_set_with_its_ids_and_tags():
    data = resources.files("psymetrics_plugin_value_portrait") / "data"
    raw = json.loads((data / "query-response-tagged.json").read_text(encoding="utf-8"))
    got = scenarios()
    assert len(got) == 104 and sum(len(s.responses) for s in got) == 520
    assert [s.id for s in got] == [e["portrait_id"] for e in raw]
    assert all([r.id for r in s.responses] == [1, 2, 3, 4, 5] for s in got)
    assert all(sorted(r.tags) == sorted(CONSTRUCTS) for s in got for r in s.responses)
    # holi-lab/ValuePortrait, first scenario (portrait 1025), response 1, as printed in the file
    first = got[0].responses[0]
    assert got[0].id == 1025 and first.tags["benevolence"] == -0.20072120279157854
    assert first.tags["self_enhancement"] == 0.17226048114973416
    assert first.tags["conscientiousness"] == -0.20636965307998417
    counts = {}
    for s in got:
        counts[s.source] = counts.get(s.source, 0) + 1
    assert sorted(counts.values()) == [26, 26, 26, 26]
    assert {"LICENSE", "CITATION.bib"} <= {f.name for f in data.iterdir()}


def _r(scenario, response, logprob, tokens, **tags):
    return ScoredResponse(scenario, response, logprob, tokens, tags)


FIXTURE = [
    # scenario 1: responses a (power .5, hedonism .31), b (power .3 exactly), c (power .29)
    _r(1, 1, -10.0, 5, power=0.5, hedonism=0.31),
    _r(1, 2, -20.0, 10, power=0.3),
    _r(1, 3, -99.0, 9, power=0.29),
    # scenario 2: one power response
    _r(2, 1, -40.0, 8, power=0.45),
]


def test_profile_rule_by_hand():
    got = {c.construct: c for c in profile(FIXTURE, ["power", "hedonism", "tradition"], 0.3)}
    # power: scenario 1 mean(-10, -20) = -15 (0.29 < 0.3 left out), scenario 2: -40;
    # mean over scenarios (-15 + -40) / 2 = -27.5 (not the pooled mean -23.33)
    assert got["power"].value == pytest.approx(-27.5)
    assert (got["power"].n_scenarios, got["power"].n_responses) == (2, 3)
    # hedonism: response 1 of scenario 1 only (a response counts for several constructs)
    assert got["hedonism"].value == pytest.approx(-10.0)
    # tradition: no tagged response -> undefined, with the reason
    assert got["tradition"].value is None and "tradition" in got["tradition"].reason
    # a higher threshold leaves power with responses tagged >= 0.45: -10 and -40
    high = {c.construct: c for c in profile(FIXTURE, ["power", "hedonism"], 0.45)}
    assert high["power"].value == pytest.approx(-25.0)
    assert high["hedonism"].value is None


def test_per_token_mean_by_hand():
    got = {c.construct: c for c in profile(FIXTURE, ["power"], 0.3, "mean")}
    # scenario 1: mean(-10/5, -20/10) = -2; scenario 2: -40/8 = -5; mean -3.5
    assert got["power"].value == pytest.approx(-3.5)
    no_counts = [_r(1, 1, -10.0, None, power=0.5)]
    missing = profile(no_counts, ["power"], 0.3, "mean")[0]
    assert missing.value is None and "token count" in missing.reason


def _results(task, logprob_of):
    """Parsed generations of every scenario, response r scored logprob_of(scenario, r)."""
    gens = []
    for item in task.load_items():
        ids = item.meta["responses"]
        comp = Completion(
            option_logprobs=tuple(logprob_of(int(item.id), r) for r in ids),
            meta={"option_tokens": [10] * len(ids)},
        )
        gens.append(task.parse(item, comp))
    return TaskResults(gens)


def test_the_task_scores_the_shipped_tags():
    """Every response scored by its own power tag: power's profile is then the mean over
    scenarios of the mean power tag of the responses tagged >= 0.3, computed here directly."""
    task = make_instrument()
    tag = {(s.id, r.id): r.tags for s in scenarios() for r in s.responses}
    res = task.score(_results(task, lambda s, r: tag[(s, r)]["power"]))
    per_scenario = []
    for s in scenarios():
        vals = [r.tags["power"] for r in s.responses if r.tags["power"] >= 0.3]
        if vals:
            per_scenario.append(sum(vals) / len(vals))
    want = sum(per_scenario) / len(per_scenario)
    assert res.scores["power"].value == pytest.approx(want)
    assert res.scores["power"].n == len(per_scenario)
    assert res.detail["threshold"] == 0.3 and res.detail["length"] == "sum"
    assert res.detail["n_responses_scored"] == 520 and res.detail["response_tokens"] == 5200
    assert res.detail["logprob_source"] is None  # a local model's own: no server's form
    assert set(res.scores) == set(CONSTRUCTS)


def test_task_options_are_checked_and_recorded():
    task = make_instrument()
    task.options = {"length": "mean", "threshold": "0.4"}
    res = task.score(_results(task, lambda s, r: -10.0))
    assert res.detail["length"] == "mean" and res.detail["threshold"] == 0.4
    assert all(s.value in (None, -1.0) for s in res.scores.values())
    task.options = {"length": "median"}
    with pytest.raises(PsymError, match="length must be one of sum, mean"):
        task.score(_results(task, lambda s, r: -10.0))


def test_each_scenario_is_one_prompt_of_five_whole_replies():
    task = make_instrument()
    item = task.load_items()[0]
    prompt = task.render(item)
    assert item.id == "1025" and prompt.messages[-1]["role"] == "user"
    assert "Title: AITA" in prompt.text
    assert [o.value for o in prompt.options] == [1, 2, 3, 4, 5]
    assert all(o.turn_end and o.continuation for o in prompt.options)
    assert prompt.options[0].continuation == scenarios()[0].responses[0].text
