"""Task kinds not covered by the bundled plugins: probes, chained judge stages, typed scores."""

from __future__ import annotations

import json

import pytest
from behaviour_fakes import ScriptedBackend

from psymetrics_core import evaluate, get_instrument
from psymetrics_core.administer.kinds import (
    JudgedTask,
    JudgeStage,
    ProbeTask,
    Score,
    TaskScores,
    Verdict,
)
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Completion, Item, Option, Prompt

META = dict(version="1", citation="-", license_status="-", item_source="-", scoring_rule="-")


class Continuation(ProbeTask):
    """Scores the log-likelihood of each BFI item's own text after its first two words."""

    def load_items(self):
        return [Item(it.id, it.text, ()) for it in self.target.forms["original"][:3]]

    def render(self, item, cell=None):
        words = item.text.split()
        head, tail = " ".join(words[:2]), " " + " ".join(words[2:])
        return Prompt(({"role": "user", "content": head},), (Option(0, tail),), head)

    def score(self, results):
        lps = [g.option_logprobs[0] for g in results.generations]
        return TaskScores.of([Score("mean_loglik", sum(lps) / len(lps), kind="mean", n=len(lps))])


class LogprobBackend(ScriptedBackend):
    def option_logprobs(self, prompts, settings, progress=None):
        self.seen += [p.options[0].label for p in prompts]
        return [Completion(option_logprobs=(-float(len(p.options[0].label)),)) for p in prompts]


def test_a_probe_task_object_runs_in_logprob_mode_through_evaluate(tmp_path):
    bfi = get_instrument("bfi")
    task = Continuation.define(
        id="bfi-continuation",
        name="probe",
        scales={"mean_loglik": "x"},
        target=bfi,
        mode="logprob",
        **META,
    )
    be = LogprobBackend(lambda t: "unused")
    res = evaluate([task], backend=be, output=tmp_path)  # the run's mode is generate
    tails = [" " + " ".join(it.text.split()[2:]) for it in bfi.items[:3]]
    assert be.seen == tails  # scored through option_logprobs, as the probe asked
    entry = res["tasks"]["bfi-continuation"]
    assert entry["kind"] == "probe" and entry["settings"]["mode"] == "logprob"
    want = sum(-len(t) for t in tails) / 3  # by hand from the scripted log-likelihoods
    assert entry["scales"]["mean_loglik"]["score"] == pytest.approx(want)
    first = json.loads((tmp_path / "samples.jsonl").read_text().splitlines()[0])
    assert first["option_logprobs"] == {tails[0]: -len(tails[0])}


def _code(text):
    word = text.strip().lower()
    return Verdict(word) if word in ("warm", "cold") else Verdict(None, "unparsed", "no code")


def _diagnose(text):
    return Verdict(text.strip() == "friendly") if text.strip() else Verdict(None, "unparsed", "")


class TwoStage(JudgedTask):
    stages = (
        JudgeStage("code", lambda item, gen, prev: f"CODE: {gen.text}", _code),
        JudgeStage(
            "diagnose",
            lambda item, gen, prev: (
                f"DIAGNOSE from {prev['code'].value}" if prev["code"].ok else None
            ),
            _diagnose,
        ),
    )

    def score(self, results):
        diag = [results.verdict("diagnose", g) for g in results.generations]
        hits = [v.value for v in diag if v is not None and v.ok]
        value = sum(hits) / len(hits) if hits else None
        return TaskScores.of([Score("friendly", value, None if hits else "no diagnosis")])


def test_chained_stages_see_earlier_verdicts_and_skip_unparsed_ones(tmp_path):
    items = [Item("a", "Say hi", ()), Item("b", "Say bye", ()), Item("c", "Say ?", ())]
    task = TwoStage.define(id="two", name="two", scales={"friendly": "x"}, items=items, **META)

    def reply(text):
        if text.startswith("CODE:"):
            return {"CODE: hi": "warm", "CODE: bye": "cold"}.get(text, "???")
        if text.startswith("DIAGNOSE"):
            return "friendly" if text.endswith("warm") else "distant"
        return text.split()[-1]

    be = ScriptedBackend(reply)
    res = evaluate([task], backend=be, output=tmp_path)
    judged = [json.loads(x) for x in (tmp_path / "judge.jsonl").read_text().splitlines()]
    assert [(j["stage"], j["item"]) for j in judged] == [
        ("code", "a"),
        ("code", "b"),
        ("code", "c"),
        ("diagnose", "a"),
        ("diagnose", "b"),
    ]  # "c" was not coded, so it is not diagnosed
    assert judged[3]["prompt"]["messages"][-1]["content"] == "DIAGNOSE from warm"
    assert res["tasks"]["two"]["scales"]["friendly"]["score"] == 0.5  # a friendly, b distant
    assert res["judge"]["stages"]["code"] == {"ok": 2, "unparsed": 1, "refused": 0}


def test_an_undefined_score_needs_a_reason():
    with pytest.raises(ValueError, match="without a reason"):
        Score("x", None)
    assert Score("x", None, "no data").to_json(3, 0)["reason"] == "no data"


def test_a_probe_task_refuses_another_administration_mode_in_one_line(tmp_path):
    """Administration modes put questionnaire items; a free-text kind under ``battery`` stops
    with one line naming the condition and the task, before any model call."""
    bfi = get_instrument("bfi")
    task = Continuation.define(
        id="bfi-continuation", name="probe", scales={"mean_loglik": "x"}, target=bfi, **META
    )
    be = LogprobBackend(lambda t: "unused")
    want = r"^the 'battery' condition applies to questionnaires, not 'bfi-continuation'$"
    with pytest.raises(PsymError, match=want):
        evaluate([task], backend=be, conditions=["battery"], output=tmp_path)
    assert be.seen == []
