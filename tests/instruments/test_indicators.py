"""Validity indicators (instruments.indicators) on hand-built answer patterns of BFI-44.

Expected values are computed by hand from the BFI-44 key (John and Srivastava, 1999): 16 of the
44 items are reverse-keyed, every scale has both keyings, answers run 1..5.
"""

from __future__ import annotations

import pytest

from psymetrics_core.base.types import Answer
from psymetrics_core.instruments.indicators import (
    AnswerRow,
    judge_parse_rate,
    option_order_sensitivity,
    questionnaire_indicators,
    warnings_of,
)
from psymetrics_core.pluginsys.defaults.aggregate import aggregate
from psymetrics_core.pluginsys.session import Session


def _bfi_answers(pick):
    session = Session()
    inst = session.get_instrument("bfi")
    answers = [(it, Answer(pick(it), "ok")) for it in inst.items]
    scores = session.hook.score(
        instrument=inst,
        responses={it.id: a.value for it, a in answers},
        form="original",
        answers={it.id: a for it, a in answers},
    )
    return aggregate(inst, scores, answers)


def test_flat_pattern_fires_straight_lining_and_inconsistency():
    # the first-run pattern: "1" to 43 items and "2" to one (item 44)
    entry = _bfi_answers(lambda it: 2 if it.id == "44" else 1)
    ind = entry["indicators"]
    assert ind["straight_lining"]["value"] == pytest.approx(43 / 44, abs=1e-4)
    assert ind["straight_lining"]["fired"] is True
    assert ind["straight_lining"]["detail"]["modal_answer"] == 1
    # acquiescence: (43 * (1-3)/2 + (2-3)/2) / 44 = (-43 - 0.5) / 44
    assert ind["acquiescence"]["value"] == pytest.approx(-43.5 / 44, abs=1e-4)
    assert ind["acquiescence"]["fired"] is True
    # openness (item 44 forward, 10 items, 2 reverse): forward keyed mean (7*1 + 2)/8 = 1.125,
    # reverse keyed 5 -> gap 3.875/4; the other four scales: gap 4/4 = 1
    per = ind["reverse_keyed_inconsistency"]["detail"]["per_scale"]
    assert per["openness"] == pytest.approx(3.875 / 4, abs=1e-4)
    assert per["extraversion"] == pytest.approx(1.0)
    assert ind["reverse_keyed_inconsistency"]["fired"] is True
    assert ind["parse_rate"]["value"] == 1.0 and ind["parse_rate"]["fired"] is False
    lines = warnings_of(ind)
    assert lines[0].startswith("straight-lining: 98% of answers are the same code (1)")
    assert any(w.startswith("reverse-keyed-inconsistency") for w in lines)


def test_varied_consistent_pattern_fires_nothing():
    # a consistent respondent: agrees (4) with forward items, disagrees (2) with reverse ones,
    # with some spread (5 / 1 on every third item)
    def pick(it):
        strong = int(it.id) % 3 == 0
        if it.reverse:
            return 1 if strong else 2
        return 5 if strong else 4

    ind = _bfi_answers(pick)["indicators"]
    assert not any(i["fired"] for i in ind.values()), ind
    assert warnings_of(ind) == []
    assert ind["straight_lining"]["value"] < 0.8
    assert ind["reverse_keyed_inconsistency"]["value"] == pytest.approx(0.0, abs=0.2)


def test_undefined_values_are_null_with_a_reason():
    rows = [AnswerRow(None, "unparsed", False, ("x",), 1, 5) for _ in range(4)]
    ind = questionnaire_indicators(rows)
    assert ind["parse_rate"]["value"] == 0.0 and ind["parse_rate"]["fired"] is True
    assert ind["straight_lining"]["value"] is None
    assert "needs 5+" in ind["straight_lining"]["reason"]
    assert ind["reverse_keyed_inconsistency"]["value"] is None
    assert judge_parse_rate(0, 0)["value"] is None
    jp = judge_parse_rate(3, 10)
    assert jp["value"] == pytest.approx(0.3) and jp["fired"] is True


def test_option_order_sensitivity_only_when_measured():
    base = {"facets": {}, "scales": {"a": {"score": 3.0}, "b": {"score": 2.0}}}
    assert option_order_sensitivity([base], 4.0) is None
    perm = {
        "facets": {"option_order": "permuted"},
        "scales": {"a": {"score": 4.0}, "b": {"score": 2.5}},
    }
    ind = option_order_sensitivity([base, perm], 4.0)
    # mean |diff| = (1.0 + 0.5) / 2 = 0.75, / range 4 = 0.1875
    assert ind["value"] == pytest.approx(0.1875)
    assert ind["fired"] is True


def test_option_order_sensitivity_recorded_for_a_run_that_varies_option_order(tmp_path):
    import json

    from psymetrics_core import evaluate
    from psymetrics_core.base.types import Completion

    class Flat:  # answers "1" to everything (a fake model, unit test)
        def generate(self, prompts, settings, reporter=None):
            return [Completion(text="1") for _ in prompts]

        def identity(self):
            return {"backend": "flat"}

    evaluate(
        ["bfi"],
        backend=Flat(),
        limit=10,
        output=tmp_path,
        conditions=["original", "reversed-options"],
    )
    entry = json.loads((tmp_path / "results.json").read_text())["tasks"]["bfi"]
    ind = entry["indicators"]["option_order_sensitivity"]
    # the same answer code under both orders: no score moves
    assert ind["value"] == 0.0 and ind["fired"] is False
    assert all("indicators" in r for r in entry["runs"])
    assert entry["runs"][0]["indicators"]["straight_lining"]["fired"] is True


def test_acquiescence_follows_the_scale_end_that_means_agree():
    # 16p's response scale runs 1 = agree ... 7 = disagree (Rao et al., 2023, App. C.1); its
    # spec says so (``agree: low``). "1" to five of six items and "3" (partially agree) to the
    # sixth is net agreement: by hand (5 * 1 + (4 - 3) / 3) / 6 = 16 / 18 = +0.889
    from psymetrics_core.pluginsys.defaults.aggregate import answer_rows

    inst = Session().get_instrument("16p")
    assert inst.response_scales["default"].agree == "low"
    answers = [(it, Answer(3 if i == 5 else 1, "ok")) for i, it in enumerate(inst.items[:6])]
    ind = questionnaire_indicators(answer_rows(inst, answers))
    assert ind["acquiescence"]["value"] == pytest.approx(16 / 18, abs=1e-4)
    assert warnings_of(ind)[1].startswith("acquiescence: net agreement of +0.89")
    # the same codes on a scale whose high end means agree (BFI: 5 = agree strongly) disagree
    rows = [AnswerRow(1.0, "ok", False, ("x",), 1, 7) for _ in range(5)]
    rows.append(AnswerRow(3.0, "ok", False, ("x",), 1, 7))
    assert questionnaire_indicators(rows)["acquiescence"]["value"] == pytest.approx(
        -16 / 18, abs=1e-4
    )
