"""Core support for behaviour tasks: task options and the judge."""

from __future__ import annotations

import pytest
from behaviour_fakes import ScriptedBackend

from psymetrics_core import get_instrument, hookimpl
from psymetrics_core.administer.options import parse_task_args, with_options
from psymetrics_core.base.errors import PsymError


def test_parse_task_args(fresh_plugins):
    kw = {"session": fresh_plugins}
    got = parse_task_args(
        ["housing.data=a.csv", "refletter.smoothing=0"], ["housing"], ["x.csv"], **kw
    )
    assert got == {
        "housing": {"data": "a.csv"},
        "refletter": {"smoothing": "0"},
        "*": {"data": "x.csv"},
    }
    assert parse_task_args([], ["housing", "mfq"], ["housing=t.csv"], **kw) == {
        "housing": {"data": "t.csv"}
    }
    with pytest.raises(PsymError, match="TASK.KEY=VALUE"):
        parse_task_args(["housing=1"], [], **kw)


def test_with_options_checks_keys():
    inst = get_instrument("housing")
    assert with_options(inst, {"data": "t.csv"}).options == {"data": "t.csv"}
    # --data without a task reaches only tasks that take data
    assert with_options(get_instrument("refletter"), None, {"data": "t.csv"}).options == {}
    with pytest.raises(PsymError, match="task 'mfq' does not take option"):
        with_options(get_instrument("mfq"), {"data": "t.csv"})


def test_separate_judge_model_is_its_own_backend(fresh_plugins, tmp_path):
    from psymetrics_core import evaluate

    judge_be = ScriptedBackend(lambda t: '{"explanation": "no way", "option": "no"}')

    class JudgePlugin:
        @hookimpl
        def register_backends(self, register):
            register("scripted-judge", lambda args: judge_be)

    fresh_plugins.register(JudgePlugin(), name="test-judge")
    advisor = ScriptedBackend(lambda t: "Do not do it.")
    res = evaluate(
        ["moral-advice"],
        backend=advisor,
        judge_model="scripted-judge",
        output=tmp_path,
        session=fresh_plugins,
    )
    assert len(advisor.seen) == 5 and len(judge_be.seen) == 5  # advice by one, verdicts by other
    assert res["judge"]["model"] == "scripted-judge" and not res["judge"]["same_as_evaluated"]
    # judge always "no": aligned where the action is anti-foundation (loyalty, care)
    scores = {k: v["score"] for k, v in res["tasks"]["moral-advice"]["scales"].items()}
    assert scores == {"care": 1.0, "fairness": 0.0, "loyalty": 1.0, "authority": 0.0, "purity": 0.0}


@pytest.mark.model
def test_refletter_and_housing_on_the_real_model(smollm2, tmp_path):
    from psymetrics_core import evaluate

    table = tmp_path / "t.csv"
    table.write_text(
        "city,neighborhood,opportunity_index\n"
        + "".join(f"Springfield,Hood {i},{i}\n" for i in range(6))
    )
    res = evaluate(
        ["refletter", "housing"],
        backend=smollm2,
        limit=2,
        max_new_tokens=12,
        task_options={"housing": {"data": str(table), "n_lists": "1"}},
        output=tmp_path / "run",
    )
    ref = res["tasks"]["refletter"]
    assert ref["counts"]["female"]["letters"] + ref["counts"]["male"]["letters"] == 2
    assert set(ref["odds_ratios"]) == {"agentic", "standout", "ability", "communal", "grindstone"}
    assert res["tasks"]["housing"]["n_items"] == 2


def test_judge_calls_share_the_response_cache(fresh_plugins, tmp_path, monkeypatch):
    from psymetrics_core import evaluate

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    advisor = ScriptedBackend(lambda t: "Do it.")
    judge_be = ScriptedBackend(lambda t: '{"explanation": "ok", "option": "yes"}')
    judge_be.name = "scripted-judge"

    class Backends:
        @hookimpl
        def register_backends(self, register):
            register("scripted-advisor", lambda args: advisor)
            register("scripted-judge", lambda args: judge_be)

    fresh_plugins.register(Backends(), name="test-backends")
    kw = {
        "model": "scripted-advisor",
        "judge_model": "scripted-judge",
        "limit": 2,
        "session": fresh_plugins,
    }
    first = evaluate(["moral-advice"], **kw)
    assert len(advisor.seen) == 2 and len(judge_be.seen) == 2
    assert first["judge"]["cache"]["misses"] == 2
    second = evaluate(["moral-advice"], **kw)  # everything answered from the cache
    assert len(advisor.seen) == 2 and len(judge_be.seen) == 2
    assert second["judge"]["cache"] == {**second["judge"]["cache"], "hits": 2, "misses": 0}
    assert second["tasks"]["moral-advice"]["scales"] == first["tasks"]["moral-advice"]["scales"]
