"""Metrics against hand computations, scikit-learn, numpy and the paper's analytic baselines."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from psymetrics_plugin_contamination.bootstrap import percentile_interval, resamples
from psymetrics_plugin_contamination.inventory import build_inventory
from psymetrics_plugin_contamination.metrics import (
    aed,
    chance_macro_f1,
    edit_distance,
    macro_f1,
    no_reverse_option_mae,
    option_errors,
    random_option_mae,
    random_target_mae,
)
from psymetrics_plugin_contamination.options import ProbeOptions
from psymetrics_plugin_contamination.parsing import INVALID

from psymetrics_core import get_instrument


def test_levenshtein_textbook_cases() -> None:
    assert edit_distance("kitten", "sitting") == 3  # Levenshtein's classic example
    assert edit_distance("", "abc") == 3
    assert edit_distance("Is talkative", "Is talkative") == 0
    assert edit_distance("Is talkative", "is talkative") == 1  # case counts


def test_aed_is_sum_of_distances_over_sum_of_lengths() -> None:
    # notes §5.1 worked example: lengths 10 and 20 (mean 15), EDs 0 and 30 -> (0 + 30/15)/2 = 1.0
    refs = ["a" * 10, "b" * 20]
    outs = ["a" * 10, "c" * 30]  # 20 substitutions + 10 insertions = 30
    assert edit_distance(refs[1], outs[1]) == 30
    assert aed(refs, outs) == pytest.approx(1.0)
    assert aed(refs, refs) == 0.0


def test_macro_f1_matches_sklearn_with_invalid_predictions() -> None:
    labels = ["E", "A", "C", "N", "O"]
    rng = random.Random(7)
    gold = [rng.choice(labels) for _ in range(60)]
    pred = [g if rng.random() < 0.6 else rng.choice(labels + [INVALID]) for g in gold]
    sklearn = pytest.importorskip("sklearn.metrics")
    expected = sklearn.f1_score(gold, pred, labels=labels, average="macro", zero_division=0)
    assert macro_f1(gold, pred, labels) == pytest.approx(expected, abs=1e-12)


def test_macro_f1_hand_values() -> None:
    # gold E E A A, pred E INVALID A E: E tp1 fp1 fn1 -> F1 0.5; A tp1 fp0 fn1 -> 2/3
    assert macro_f1(["E", "E", "A", "A"], ["E", INVALID, "A", "E"], ["E", "A"]) == pytest.approx(
        (0.5 + 2 / 3) / 2
    )
    # INVALID is a false negative only: all-INVALID predictions give 0, not undefined
    assert macro_f1(["E", "A"], [INVALID, INVALID], ["E", "A"]) == 0.0


def test_option_errors_policies() -> None:
    gold = [5.0, 4.0, 3.0, 2.0, 1.0]
    # notes §5.4 worked example: reversed item answered 1..5 -> 12 error points over 5 options
    assert option_errors(gold, [1, 2, 3, 4, 5], 1, 5, "max_error") == (12, 5)
    # wrong count: the largest possible error 4+3+2+3+4 = 16, or dropped, or padded with 1
    assert option_errors(gold, [5, 4], 1, 5, "max_error") == (16, 5)
    assert option_errors(gold, [5, 4], 1, 5, "drop") is None
    assert option_errors(gold, [5, 4], 1, 5, "truncate_pad") == (0 + 0 + 2 + 1 + 0, 5)


def test_bfi_ignore_reverse_baseline_is_192_over_220() -> None:
    # Han et al.: gemini-2.5-flash-lite's BFI-44 option-score MAE 0.87 = 16 reversed items x 12
    # error points / (44 items x 5 options) (notes §2.1, §5.4); computed here from the spec's key
    inv = build_inventory(get_instrument("bfi"))
    assert no_reverse_option_mae(inv.scored) == pytest.approx(192 / 220)
    assert round(192 / 220, 3) == 0.873
    # SD3 27 items with 5 reversed: 5 x 12 / 135 (key only: no texts needed for keying)
    sd3 = get_instrument("sd3")
    texts = [replace(it, text=f"item {it.id}") for it in sd3.items]
    sd3_inv = build_inventory(replace(sd3, forms={"original": texts}))
    assert no_reverse_option_mae(sd3_inv.scored) == pytest.approx(60 / 135)


def test_ignore_reverse_baseline_under_score_base_one() -> None:
    # score_base=one shifts 0-based scales to 1-based (notes F-03, A-5: the option-score prompt
    # says "All scores are positive integers"; the paper's MFQ is most likely coded 1-6). A model
    # that ignores reverse keying answers the ascending values of that base: on MFQ (no reversed
    # item) it is right everywhere, so the baseline is 0, not 1 per option.
    for base in ("native", "one"):
        mfq = build_inventory(get_instrument("mfq"), ProbeOptions(score_base=base))
        assert no_reverse_option_mae(mfq.scored) == 0.0, base
    # ASI (0-5, 22 scored items, 6 reversed: 3, 6, 7, 13, 18, 21): a reversed item answered
    # 1..6 against gold 6..1 costs 5+3+1+1+3+5 = 18 points, a forward item 0:
    # 6 x 18 / (22 x 6) = 108/132 in either base (under "one" the 0-based raw codes would
    # charge the 16 forward items 6 points each: 204/132)
    for base in ("native", "one"):
        asi = build_inventory(get_instrument("asi"), ProbeOptions(score_base=base))
        assert no_reverse_option_mae(asi.scored) == pytest.approx(108 / 132), base


def test_random_baselines_by_hand() -> None:
    inv = build_inventory(get_instrument("bfi"))
    # uniform guesses on 1..5 against any permutation of 1..5: mean |g - U| over all 25 pairs
    pairs = [abs(g - u) for g in range(1, 6) for u in range(1, 6)]
    assert random_option_mae(inv.scored) == pytest.approx(sum(pairs) / 25)  # = 40/25 = 1.6
    # random option vs targets 1, 3, 5: (10 + 6 + 10) / 5 / 3
    assert random_target_mae(inv.scored, "nearest") == pytest.approx((10 + 6 + 10) / 15)
    # 5 dimensions with shares 8,9,9,8,10 of 44; q = 1/5
    shares = [8 / 44, 9 / 44, 9 / 44, 8 / 44, 10 / 44]
    expected = sum(2 * p * 0.2 / (p + 0.2) for p in shares) / 5
    assert chance_macro_f1(inv) == pytest.approx(expected)


def test_bootstrap_interval_equals_numpy_percentiles_on_the_same_draws() -> None:
    np = pytest.importorskip("numpy")
    units = [float(x) for x in [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]]
    draws = resamples(len(units), 500, seed=11)

    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs)

    low, high, why = percentile_interval(units, mean, draws)
    reps = [np.mean([units[i] for i in d]) for d in draws]
    assert why is None
    assert low == pytest.approx(np.percentile(reps, 2.5))
    assert high == pytest.approx(np.percentile(reps, 97.5))
    assert resamples(5, 3, seed=1) == resamples(5, 3, seed=1)  # seeded
    assert percentile_interval([1.0], mean, resamples(1, 10, 1))[2] is not None
