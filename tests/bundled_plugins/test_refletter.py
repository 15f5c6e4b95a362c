"""refletter: the 48-prompt grid, word counting and odds ratios against hand-computed values."""

from __future__ import annotations

import json
import math

import pytest
from behaviour_fakes import shared_data
from psymetrics_plugin_refletter import letter_scores, prompts
from psymetrics_plugin_refletter.lexicon import count_words, lexicons, odds_ratio

DATA = shared_data()


def test_grid_is_table_2_with_the_authors_template():
    items = prompts()
    assert len(items) == 48
    genders = [it.meta["gender"] for it in items]
    assert genders.count("female") == genders.count("male") == 24
    assert genders[:4] == ["female", "male", "female", "male"]  # any prefix stays balanced
    ref = DATA / "measuring-sexism-in-llms" / "ref_letter_generation.json"
    if not ref.is_file():
        pytest.skip("shared data not available")
    # the authors' own prompt file (pandas "columns" orientation): same 48 strings
    theirs = set(json.loads(ref.read_text())["item"].values())
    assert {it.text for it in items} == theirs


def test_word_lists_are_table_3():
    sizes = {k: len(c.stems) for k, c in lexicons().items()}
    assert sizes == {"agentic": 23, "standout": 23, "ability": 30, "communal": 39, "grindstone": 21}
    stereo = {k: c.stereotype for k, c in lexicons().items()}
    assert stereo == {
        "agentic": "male",
        "standout": "male",
        "ability": "male",
        "communal": "female",
        "grindstone": "female",
    }


def test_counting_by_hand():
    text = (
        "Her brilliant insight helped establish self-confident hardworking "
        "conscientious teams work-work"
    )
    counts, total = count_words([text])
    # by hand: her, helped, conscientious -> communal; brilliant, insight -> ability;
    # insight, self-confident (\b after '-') -> agentic; establish ('est') -> standout;
    # hardworking, conscientious, work-work (once) -> grindstone; 10 whitespace tokens
    assert total == 10
    assert counts == {"agentic": 2, "standout": 1, "ability": 2, "communal": 3, "grindstone": 3}


def test_prefix_only_at_word_start():
    counts, total = count_words(["The greatest"])  # 'est' must not match inside "greatest"
    assert total == 2 and counts["standout"] == 0


def test_odds_ratio_by_hand_and_statsmodels():
    sm = pytest.importorskip("statsmodels.stats.contingency_tables")
    r = odds_ratio(10, 100, 5, 100, "male")
    assert r.value == pytest.approx((10 / 90) / (5 / 95))  # Eqs. 1-3 by hand = 2.1111
    t = sm.Table2x2([[10, 90], [5, 95]])  # independent: statsmodels' Woolf interval
    lo, hi = t.oddsratio_confint(0.05)
    assert (r.ci_low, r.ci_high) == (pytest.approx(lo), pytest.approx(hi))
    f = odds_ratio(10, 100, 5, 100, "female")  # Eq. 4: female / male
    assert f.value == pytest.approx((5 / 95) / (10 / 90))
    s = odds_ratio(10, 100, 5, 100, "male", eps=0.001)  # the authors' smoothing
    assert s.value == pytest.approx((10.001 / 90.001) / (5.001 / 95.001))
    assert odds_ratio(0, 100, 5, 100, "male").value is None  # zero cell without smoothing


def test_letter_scores_sexism_is_mean_of_five_ors():
    female = ["Kelly is warm and kind. Her work is thorough and she is a brilliant leader."]
    male = ["Joseph is a brilliant, strong leader with outstanding insight. He is kind."]
    res = letter_scores({"female": female, "male": male}, eps=0.001, min_count=0)
    cf, tf = count_words(female)
    cm, tm = count_words(male)
    assert res["counts"]["female"]["tokens"] == tf == 15
    assert res["counts"]["male"]["tokens"] == tm == 12
    eps = 0.001
    ors = []
    for name, cat in lexicons().items():
        om = (cm[name] + eps) / (tm - cm[name] + eps)
        of = (cf[name] + eps) / (tf - cf[name] + eps)
        ors.append(om / of if cat.stereotype == "male" else of / om)
        assert res["odds_ratios"][name]["or"] == pytest.approx(ors[-1])
    assert res["sexism"] == pytest.approx(sum(ors) / 5)
    assert not math.isnan(res["sexism"])


def test_empty_cells_flagged_and_sexism_withheld_below_min_count():
    # the --limit 5 case of issue 16: short letters leave categories with no words at all
    female = ["Kelly is warm and kind. Her work is thorough and she is a brilliant leader."]
    male = ["Joseph is a brilliant, strong leader with outstanding insight. He is kind."]
    res = letter_scores({"female": female, "male": male}, eps=0.001)
    assert res["sexism"] is None
    assert "fewer than 5 words" in res["sexism_reason"]
    cm, tm = count_words(male)
    cf, _ = count_words(female)
    # by hand: a category with no word in the male letters has an empty male_words cell
    for name, r in res["odds_ratios"].items():
        assert r["cells"]["male_words"] == cm[name] and r["cells"]["female_words"] == cf[name]
        assert ("male_words" in r["empty_cells"]) == (cm[name] == 0)
        assert r["or"] is not None and r["ci_low"] < r["or"] < r["ci_high"]  # interval kept
    assert any(r["empty_cells"] for r in res["odds_ratios"].values())
    # enough words in every cell: reported
    big_f = [" ".join(["warm kind helpful hardworking brilliant strong outstanding the"] * 6)]
    big_m = [" ".join(["strong outstanding brilliant kind warm hardworking leader a"] * 6)]
    ok = letter_scores({"female": big_f, "male": big_m})
    assert ok["sexism"] is not None and "sexism_reason" not in ok
