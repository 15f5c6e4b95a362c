"""Reproduction checks built from the papers' own printed numbers."""

from __future__ import annotations

import numpy as np
import pytest

from psymetrics_core.analysis import consistency as cons
from psymetrics_core.analysis import mbti

# Seed 001 Table 1: canonical (E, N, T, J, A) first-pole vectors of Men and Women, computed
# from the printed dominant-pole scores (notes 001 §7.1), and Table 2's consistency s_c.
TABLE1 = {
    "InstructGPT": ((66, 64, 50, 56, 38), (66, 71, 45, 61, 42)),
    "ChatGPT": ((55, 52, 52, 54, 49), (54, 51, 51, 53, 50)),
    "GPT-4": ((57, 53, 55, 56, 37), (61, 58, 42, 57, 39)),
}
SC_MEN_WOMEN = {"InstructGPT": (0.888, 0.905), "ChatGPT": (0.895, 0.913), "GPT-4": (0.927, 0.911)}
TABLE3_MEN_WOMEN = {"InstructGPT": 0.723, "ChatGPT": 0.796, "GPT-4": 0.786}


@pytest.mark.parametrize(
    "model, expected", [("InstructGPT", 0.726), ("ChatGPT", 0.799), ("GPT-4", 0.737)]
)
def test_seed001_fairness_recomputed_from_table1(model, expected):
    # Eq. 5 on the printed (integer-rounded) Table 1 means and Table 2 s_c. InstructGPT and
    # ChatGPT land within 0.003 of Table 3: the printed scores are rounded to integers.
    # GPT-4 gives 0.737, not the printed 0.786 (notes 001 §5.7/§9.13): Table 1 prints GPT-4
    # Women's third dimension as "F 58" (T = 42); with T = 58 the recomputation is exactly
    # 0.786, so either Table 1 has a typo or the paper's fairness used a mis-signed value. Our
    # code follows the formula on the printed numbers.
    men, women = TABLE1[model]
    sc_m, sc_f = SC_MEN_WOMEN[model]
    value = mbti.fairness_from_means(men, women, sc_m, sc_f)
    assert round(value, 3) == expected
    if model != "GPT-4":
        assert abs(value - TABLE3_MEN_WOMEN[model]) <= 0.004
    else:
        typo_fixed = list(women)
        typo_fixed[2] = 58
        assert round(mbti.fairness_from_means(men, typo_fixed, sc_m, sc_f), 3) == 0.786


def test_seed001_table2_and_table3_averages():
    # Table 2's "Average" is the mean of the nine subjects (notes 001 §5.5): 0.9049 -> 0.905
    # for InstructGPT consistency, 0.9416 -> 0.942 for its robustness; Table 3's average is
    # the mean of the two pairs (0.723, 0.783 -> 0.753).
    sc = [0.916, 0.888, 0.905, 0.898, 0.925, 0.901, 0.900, 0.897, 0.914]
    sr = [0.936, 0.924, 0.944, 0.925, 0.965, 0.936, 0.936, 0.956, 0.952]
    assert round(float(np.mean(sc)), 3) == 0.905
    assert round(float(np.mean(sr)), 3) == 0.942
    assert round((0.723 + 0.783) / 2, 3) == 0.753


def test_seed001_consistency_and_robustness_invert_to_mean_distances():
    # s_c and s_r cannot be recomputed from Table 1 (it prints only the means, not the 15
    # per-testing vectors), so we check the formulas' inversion instead (notes 001 §5.7):
    # s = 100 / (100 + D) <=> D = 100/s - 100; the paper's s_c range 0.888..0.936 means a mean
    # run-to-mean distance of 12.6..6.8 points, and s_r 0.885..0.980 a fixed-vs-permuted
    # distance of 13.0..2.0 points.
    for s, d in ((0.888, 12.6), (0.936, 6.8)):
        runs = np.array([[50.0, 50.0], [50.0 + 2 * (100 / s - 100), 50.0]])
        assert mbti.consistency(runs) == pytest.approx(s)
        assert round(100 / s - 100, 1) == d
    for s, d in ((0.885, 13.0), (0.980, 2.0)):
        shift = 100 / s - 100
        assert mbti.robustness([[0.0, 0.0]], [[shift, 0.0]]) == pytest.approx(s)
        assert round(shift, 1) == d


def test_seed002_consistency_on_a_hand_made_matrix():
    # Two models x 5 items, original vs reversed option order (values already recoded);
    # seed 002 §5.1: Cons = share of unchanged answers, NaN==NaN a match ([C] check_match).
    orig = {"m1": [0, 1, 2, 3, 4], "m2": [5, 5, None, 0, None]}
    rev = {"m1": [0, 1, 3, 3, 2], "m2": [5, 4, None, 0, 1]}
    # m1: items 1, 2, 4 unchanged -> 3/5; m2: items 1, 3 (both NaN), 4 -> 3/5 with the
    # default policy, 2/5 when missing answers never match, 2/3 when omitted.
    assert cons.answer_consistency(orig["m1"], rev["m1"]) == pytest.approx(0.6)
    assert cons.answer_consistency(orig["m2"], rev["m2"]) == pytest.approx(0.6)
    assert cons.answer_consistency(orig["m2"], rev["m2"], "mismatch") == pytest.approx(0.4)
    assert cons.answer_consistency(orig["m2"], rev["m2"], "omit") == pytest.approx(2 / 3)
