"""κ, DCR, μΔ, accuracy and baselines of the projective plugin's ``drift`` on hand cases."""

from __future__ import annotations

import random

import pytest
from psymetrics_plugin_projective.drift import (
    directional_consistency,
    exact_accuracy,
    judge_agreement,
    linear_kappa,
    majority_baseline,
    mbti_hamming,
    mean_shift,
)


def test_linear_kappa_hand_computed() -> None:
    # K = 3, d_ij = |i-j|/2. Observed disagreement (0 + .5 + 0 + .5 + 0)/5 = 0.2; marginals
    # a = (.4, .4, .2), b = (.2, .4, .4) give expected disagreement 0.24 + 0.12 + 0.08 = 0.44;
    # kappa = 1 - 0.2/0.44 = 6/11.
    k = linear_kappa([1, 2, 3, 1, 2], [1, 3, 3, 2, 2], labels=[1, 2, 3])
    assert k.value == pytest.approx(6 / 11)
    assert k.n == 5


def test_linear_kappa_equals_sklearn() -> None:
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = random.Random(7)
    for k, n in [(5, 75), (4, 15), (2, 60), (4, 9)]:
        labels = list(range(1, k + 1))
        a = [rng.choice(labels) for _ in range(n)]
        b = [x if rng.random() < 0.5 else rng.choice(labels) for x in a]
        ours = linear_kappa(a, b, labels)
        ref = sklearn.cohen_kappa_score(a, b, weights="linear", labels=labels)
        assert ours.value == pytest.approx(ref), (k, n)


def test_kappa_undefined_and_missing_pairs() -> None:
    same = linear_kappa([2, 2, 2], [2, 2, 2], labels=[0, 1, 2, 3])
    assert same.value is None and "chance disagreement is zero" in (same.reason or "")
    assert linear_kappa([], [], labels=[0, 1]).value is None
    # a missing prediction drops its pair (and says so)
    k = linear_kappa([1, None, 3, 1, 2, 2], [1, 3, 3, 2, 2, None], labels=[1, 2, 3])
    assert k.n == 4 and "2 pair(s)" in (k.reason or "")
    bad = linear_kappa([1, 9], [1, 2], labels=[1, 2, 3])
    assert bad.value is None and "outside" in (bad.reason or "")


def test_dcr_direction_tie_and_undefined() -> None:
    # changes: 1->0 down, 2->1 down, 1->2 up, 2->1 down: DCR = 3/4, downward
    d = directional_consistency([0, 1, 2, 3, 1, 2], [0, 0, 1, 3, 2, 1])
    assert (d.value, d.direction, d.n_up, d.n_down, d.n_unchanged) == (0.75, "down", 1, 3, 2)
    assert d.arrow == "↓"
    tie = directional_consistency([0, 1], [1, 0])
    assert (tie.value, tie.direction, tie.arrow) == (0.5, "=", "=")
    none = directional_consistency([1, 2, 3], [1, 2, 3])
    assert none.value is None and none.direction is None
    assert "no prediction changed" in (none.reason or "")


def test_mean_shift_and_bootstrap_interval() -> None:
    s = mean_shift([2, 1, 3, 2], [1, 1, 2, 0], n_boot=500, seed=1)
    assert s.mean == pytest.approx(-1.0) and s.abs_mean == pytest.approx(1.0)
    assert s.ci_low is not None and s.ci_high is not None
    assert -2.0 <= s.ci_low <= -1.0 <= s.ci_high <= 0.0
    # two pairs with shifts 0 and 2: resampled means are 0, 1, 2 with probabilities
    # 1/4, 1/2, 1/4, so the 95% percentile interval is [0, 2]
    two = mean_shift([0, 0], [0, 2], n_boot=4000, seed=3)
    assert (two.ci_low, two.ci_high) == (0.0, 2.0)
    flat = mean_shift([1, 1, 1], [2, 2, 2], n_boot=200)
    assert (flat.ci_low, flat.ci_high, flat.abs_ci_low) == (1.0, 1.0, 1.0)
    one = mean_shift([1], [3])
    assert one.mean == 2.0 and one.ci_low is None and "one pair" in (one.reason or "")


def test_accuracy_hamming_and_agreement() -> None:
    acc = exact_accuracy([1, 2, None, 3], [1, 3, 2, 3])
    assert acc.value == pytest.approx(0.5) and acc.n == 4  # a failed parse counts wrong
    ham = mbti_hamming(["INTP", "ENFP", None], ["INTJ", "ISTP", "ENFP"])
    assert ham.value == pytest.approx((1 + 3 + 4) / 3)  # INTP/INTJ 1, ENFP/ISTP 3, none 4
    agree = judge_agreement([0, 1, 2, 3], [0, 1, 3, 3], labels=[0, 1, 2, 3])
    assert agree["exact"].value == pytest.approx(0.75)
    assert agree["kappa_linear"].value is not None


def test_majority_baseline_hand_counts() -> None:
    base = majority_baseline({"O": [3, 3, 5, 1], "N": [None, 2, 2, 2]})
    assert base["O"].value == pytest.approx(0.5) and base["N"].value == pytest.approx(1.0)
    assert majority_baseline({"x": [None]})["x"].value is None
