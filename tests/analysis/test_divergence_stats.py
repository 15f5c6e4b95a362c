"""The statistics of the divergence section against an independent computation: scipy.stats
(spearmanr, rankdata, permutation_test) and NDCG worked by hand."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from psymetrics_core.analysis.divergence_stats import (
    average_ranks,
    ndcg,
    rank_agreement,
    sign_flip,
    spearman_rho,
)

X = [2.75, 5.625, 3.625, 4.0, 1.5, 4.0, 5.75]  # ties at 4.0
Y = [-196.0, -161.7, -184.6, -204.9, -198.2, -186.7, -178.1]


def test_average_ranks_equal_scipy_rankdata() -> None:
    assert list(average_ranks(X)) == list(stats.rankdata(X, method="average"))


def test_rho_equals_scipy_spearmanr_with_ties() -> None:
    rho, why = spearman_rho(X, Y)
    assert why is None
    assert rho == pytest.approx(stats.spearmanr(X, Y).statistic, abs=1e-12)


def test_exact_permutation_p_equals_enumeration_with_scipy_rho() -> None:
    # 6 constructs (a tie among them): exact over 6! orders; the reference enumerates every
    # order itself and takes scipy.stats.spearmanr's rho of each
    x, y = X[:6], Y[:6]
    res = rank_agreement(x, y)
    observed = stats.spearmanr(x, y).statistic
    rhos = [
        stats.spearmanr(x, [y[i] for i in order]).statistic
        for order in itertools.permutations(range(6))
    ]
    expected = np.mean(np.abs(rhos) >= abs(observed) - 1e-12)
    assert res.p_method == "exact (720 orders)"
    assert res.p == pytest.approx(expected, abs=1e-12)
    assert res.ci_low is not None and res.ci_high is not None
    assert res.ci_low <= res.rho <= res.ci_high  # type: ignore[operator]


def test_more_than_eight_constructs_draw_seeded_permutations() -> None:
    x = list(range(10))
    y = [0, 2, 1, 3, 5, 4, 6, 8, 7, 9]
    a, b = rank_agreement(x, y), rank_agreement(x, y)
    assert a.p_method == "10000 seeded draws"
    assert a.p == b.p  # seeded: the same runs give the same p
    assert a.p is not None and a.p < 0.01  # rho 0.94 with n=10 (exact p about 1e-4)


def test_constant_profile_is_undefined_with_reason() -> None:
    res = rank_agreement([3.0, 3.0, 3.0, 3.0], [1.0, 2.0, 3.0, 4.0])
    assert res.rho is None and res.p is None
    assert res.reason == "the first profile is constant: it has no ranking"
    short = rank_agreement([1.0, 2.0], [2.0, 1.0])
    assert short.rho is None and "needs 3 or more" in str(short.reason)


def test_ndcg_by_hand() -> None:
    names = ["a", "b", "c"]
    reference = [3.0, 2.0, 1.0]  # ideal order a, b, c: relevance 3, 2, 1
    other = [1.0, 2.0, 3.0]  # ranks c, b, a
    ideal = 3 + 2 / math.log2(3) + 1 / 2
    got = 1 + 2 / math.log2(3) + 3 / 2
    assert ndcg(names, reference, other) == pytest.approx(got / ideal)
    assert ndcg(names, reference, reference) == pytest.approx(1.0)
    # a tie in the other profile is broken by construct name: a before b
    assert ndcg(names, reference, [2.0, 2.0, 1.0]) == pytest.approx(1.0)
    assert ndcg(names, reference, other, k=1) == pytest.approx(1 / 3)


def test_sign_flip_equals_enumeration_and_scipy() -> None:
    d = [0.3, -0.1, 0.5, 0.2, 0.05]
    res = sign_flip(d)
    means = [np.mean(np.array(s) * d) for s in itertools.product((1, -1), repeat=len(d))]
    assert res.p_one_sided == pytest.approx(np.mean(np.array(means) >= np.mean(d) - 1e-12))
    ref = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="greater"
    )
    assert res.p_one_sided == pytest.approx(ref.pvalue)
    assert res.method == "exact (32 sign assignments)"
    one = sign_flip([0.4])
    assert one.mean is None and one.reason == "1 model(s): needs 2 or more"


def test_bootstrap_interval_equals_scipy_rho_of_the_same_resamples(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from psymetrics_core.analysis import divergence_stats as ds

    monkeypatch.setattr(ds, "DRAWS", 400)
    res = rank_agreement(X, Y)
    idx = np.random.default_rng(ds.SEED).integers(0, len(X), (400, len(X)))
    rhos = []
    for row in idx:
        xs, ys = np.asarray(X)[row], np.asarray(Y)[row]
        if len(set(xs)) > 1 and len(set(ys)) > 1:  # a constant resample has no rho
            rhos.append(stats.spearmanr(xs, ys).statistic)
    assert res.ci_draws == len(rhos)
    assert res.ci_low == pytest.approx(np.quantile(rhos, 0.025), abs=1e-12)
    assert res.ci_high == pytest.approx(np.quantile(rhos, 0.975), abs=1e-12)
