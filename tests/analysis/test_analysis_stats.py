"""Each statistic of ``psym analyze`` against an independent computation named in the test."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from psymetrics_core.analysis import consistency as cons
from psymetrics_core.analysis import facets, mbti, norms, reliability, styles, validity
from psymetrics_core.base.errors import PsymError


def test_cronbach_alpha_hand_calculation():
    # Hand calculation: three items, each with variance 5/3 (ddof 1); totals 4, 6, 9, 11 have
    # variance 29/3, so alpha = 3/2 * (1 - 5/(29/3)) = 21/29.
    d = pd.DataFrame({"a": [1, 2, 3, 4], "b": [2, 1, 4, 3], "c": [1, 3, 2, 4]})
    assert reliability.cronbach_alpha(d)["alpha"] == pytest.approx(21 / 29, abs=1e-12)


def test_cronbach_alpha_undefined_without_variation_or_complete_rows():
    d = pd.DataFrame({"a": [3, 3, 3], "b": [2, 2, 2]})
    res = reliability.cronbach_alpha(d)
    assert res["alpha"] is None and "does not vary" in res["note"]
    # only two complete rows (listwise): no alpha rather than a degenerate number
    d = pd.DataFrame({"a": [1, None, 4, None], "b": [4, 4, 1, 3]})
    res = reliability.cronbach_alpha(d)
    assert res["alpha"] is None and res["n"] == 2 and res["rows_used"] == "2 of 4"


def test_omega_recovers_a_known_one_factor_structure():
    # Hand calculation: population correlations of a congeneric model with loadings
    # .8 .7 .6 .5 (uniquenesses 1 - l^2); omega = 2.6^2 / (2.6^2 + 2.26) = 6.76 / 9.02.
    lam = np.array([0.8, 0.7, 0.6, 0.5])
    corr = np.outer(lam, lam)
    np.fill_diagonal(corr, 1.0)
    res = reliability.omega_from_corr(corr, nobs=500)
    assert res["omega"] == pytest.approx(6.76 / 9.02, abs=1e-6)
    assert res["loadings"] == pytest.approx(list(lam), abs=1e-5)


def test_icc_shrout_fleiss_1979_worked_example():
    # Published worked example: Shrout & Fleiss (1979), Psychological Bulletin 86(2), Table 2
    # (6 targets x 4 judges) and their reported ICCs (to 2 decimals).
    data = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    long = pd.DataFrame(
        [(t, j, v) for t, row in enumerate(data) for j, v in enumerate(row)],
        columns=["t", "r", "y"],
    )
    res = reliability.icc(long, "t", "r", "y")
    published = {
        "ICC(1,1)": 0.17,
        "ICC(A,1)": 0.29,
        "ICC(C,1)": 0.71,
        "ICC(1,k)": 0.44,
        "ICC(A,k)": 0.62,
        "ICC(C,k)": 0.91,
    }
    for key, value in published.items():
        assert round(res[key], 2) == value, key


def test_consistency_nan_policies_seed_002():
    # Hand-made answer matrix (seed 002 §5.1 and its [C] check_match): both-NaN counts as a
    # match, one NaN as a mismatch.
    orig = [0, 1, 2, None, None, 5]
    rev = [0, 2, 2, None, 3, 5]
    assert cons.answer_consistency(orig, rev, "match") == pytest.approx(4 / 6)
    assert cons.answer_consistency(orig, rev, "mismatch") == pytest.approx(3 / 6)
    assert cons.answer_consistency(orig, rev, "omit") == pytest.approx(3 / 4)
    with pytest.raises(PsymError):
        cons.answer_consistency(orig, rev, "bogus")


def test_tukey_fences_hand_calculation():
    # numpy linear quantiles of .5 .6 .7 .8 .9: Q1 .6, Q3 .8, IQR .2 -> fences .3 and 1.1
    f = cons.tukey_fences([0.5, 0.6, 0.7, 0.8, 0.9])
    assert (f["q1"], f["q3"]) == pytest.approx((0.6, 0.8))
    assert (f["lower"], f["upper"]) == pytest.approx((0.3, 1.1))


def test_z_and_percentile_hand_calculation():
    # z = (4 - 3) / 0.5 = 2; Phi(2) = 0.977250 (normal table)
    r = norms.z_and_percentile(4.0, 3.0, 0.5)
    assert r["z"] == 2.0 and r["percentile"] == pytest.approx(97.7250, abs=1e-4)


def test_hedges_g_and_ci_match_pingouin():
    import pingouin as pg

    x = np.array([5.0, 6, 7, 8, 9])
    y = np.array([3.0, 4, 4, 5, 6, 2, 3])
    g = norms.hedges_g(x.mean(), x.std(ddof=1), 5, y.mean(), y.std(ddof=1), 7)
    ref = pg.compute_effsize(x, y, eftype="hedges")
    ci = pg.compute_esci(stat=ref, nx=5, ny=7, eftype="hedges", decimals=6)
    assert g["g"] == pytest.approx(ref, abs=1e-9)
    assert (g["ci_low"], g["ci_high"]) == pytest.approx(tuple(ci), abs=1e-5)


@pytest.mark.parametrize(
    "args, f, p_f, equal_var, t, p",
    [
        # seed 003 §7.4 worked examples (computed there with PsychoBench's algorithm)
        ((6.8, 0.4, 10, 4.92, 0.76, 112), 3.61, 0.0406, True, 7.7069, 4.1e-12),
        ((6.2, 0.7, 10, 4.01, 1.05, 418), 2.25, 0.1791, True, 6.5567, 1.6e-10),
        ((39.9, 0.3, 10, 29.55, 5.32, 19120), 314.47, 0.0, False, 101.10, 3.2e-19),
        ((4.2, 0.3, 10, 3.92, 0.66, 6076), 4.84, 0.0130, True, 1.3413, 0.180),
    ],
)
def test_psychobench_test_worked_examples(args, f, p_f, equal_var, t, p):
    r = norms.psychobench_test(*args)
    assert round(r["F"], 2) == f
    assert round(r["p_F"], 4) == p_f
    assert r["equal_var"] is equal_var
    assert r["t"] == pytest.approx(t, abs=5e-3 if t > 100 else 5e-5)
    assert float(f"{r['p']:.2g}") == pytest.approx(p, rel=1e-6)
    assert r["significant"] is (p <= 0.01)


def test_norm_groups_read_defensively():
    class Inst:
        extra = {
            "norms": {
                "openness": [
                    {
                        "name": "Crowd",
                        "mean": 3.92,
                        "sd": 0.66,
                        "n": 6076,
                        "source": "PsychoBench",
                        "year": 2023,
                    }
                ],
                "broken": [{"name": "x", "mean": "n/a"}],
                "care": {"US adults": {"mean": 3.5, "sd": 0.7, "n": 100}},
            }
        }

    g = norms.norm_groups(Inst())
    assert g["openness"][0]["n"] == 6076 and g["care"][0]["name"] == "US adults"
    assert "broken" not in g
    assert norms.norm_groups(object()) == {}


def test_response_styles_hand_calculation():
    # 1-5 scale, answers 5 5 5 3 1 + one refusal + one unparsed (7 administered)
    ans = [5, 5, 5, 3, 1, None, None]
    r = styles.response_styles(ans, [1] * 7, [5] * 7, ["ok"] * 5 + ["refused", "unparsed"])
    # (x - 3)/2 = 1, 1, 1, 0, -1 -> mean 0.4; above midpoint 3/5; extremes 4/5; midpoint 1/5;
    # longest identical run 3 of 5 answered; modal share 3/5; refusal 1/7; invalid 1/7.
    assert r["acquiescence"] == pytest.approx(0.4)
    assert r["agree_rate"] == pytest.approx(0.6)
    assert r["extreme"] == pytest.approx(0.8)
    assert r["midpoint"] == pytest.approx(0.2)
    assert r["straightlining"] == pytest.approx(0.6)
    assert r["modal_share"] == pytest.approx(0.6)
    assert r["refusal_rate"] == pytest.approx(1 / 7)
    assert r["invalid_rate"] == pytest.approx(1 / 7)
    # an even scale (0-5) has no midpoint
    assert math.isnan(styles.response_styles([0, 5], [0, 0], [5, 5], ["ok", "ok"])["midpoint"])


def test_mbti_metrics_hand_calculation():
    # runs (0,0) and (6,8): mean (3,4), both 5 away -> s_c = 100/105
    assert mbti.consistency([[0, 0], [6, 8]]) == pytest.approx(100 / 105)
    assert mbti.robustness([[0, 0]], [[3, 4]]) == pytest.approx(100 / 105)
    # identical subjects with s_c = 1 each: s_f = 100 * 1 * 1 / 100
    assert mbti.fairness([[50, 50]], [[50, 50]]) == pytest.approx(1.0)
    assert mbti.pomp(3.0, 1, 5) == 50.0


def test_facet_decomposition_hand_calculation():
    # 2 x 2 design option_order x seed, y = 1 3 2 5 (a0 b0 a1 b1). Grand mean 2.75.
    # SS_option = 4 * 1.25^2 = 6.25; SS_seed = 4 * 0.75^2 = 2.25; SS_total = 8.75;
    # residual (the interaction) 0.25.
    frame = pd.DataFrame(
        {"opt": ["a", "b", "a", "b"], "seed": ["0", "0", "1", "1"], "score": [1, 3, 2, 5]}
    )
    res = facets.decompose(frame, ["opt", "seed"])
    assert res["shares"]["opt"] == pytest.approx(6.25 / 8.75)
    assert res["shares"]["seed"] == pytest.approx(2.25 / 8.75)
    assert res["shares"]["residual"] == pytest.approx(0.25 / 8.75)
    flat = facets.decompose(frame.assign(score=2.0), ["opt", "seed"])
    assert "identical" in flat["note"]


def test_spearman_fisher_hand_calculation():
    # No ties: rho = 1 - 6 * sum d^2 / (n (n^2 - 1)) = 1 - 6 * 4 / 120 = 0.8.
    # Fisher z: atanh(.8) = 1.0986123, SE = 1/sqrt(2); 95% CI = tanh(1.0986123 -+ 1.959964 *
    # 0.7071068) = tanh(-0.2872915), tanh(2.4845161) = (-0.279640, 0.986196) (calculator,
    # as seed 002 §5.3), and pingouin's Fisher-z interval for r agrees.
    import pingouin as pg

    r = validity.spearman_fisher([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], sign=1)
    assert r["rho"] == pytest.approx(0.8)
    assert r["ci"] == pytest.approx([-0.279640, 0.986196], abs=1e-5)
    ref = pg.compute_esci(stat=0.8, nx=5, eftype="r", decimals=6)
    assert r["ci"] == pytest.approx(list(ref), abs=1e-6)
    assert r["supported"] is True and r["alternative"] == "greater"
    assert r["strength"] == "strong"
    assert validity.schober(0.47) == "moderate" and validity.schober(-0.37) == "weak"


def test_hypothesis_parsing():
    h = validity.parse_hypothesis("mfq.fairness~asi.hostile:-")
    assert (h.a, h.b, h.sign) == ("mfq.fairness", "asi.hostile", -1)
    with pytest.raises(PsymError, match="expected TASK.SCALE~TASK.SCALE"):
        validity.parse_hypothesis("mfq.fairness,asi.hostile")


def test_norm_groups_from_scale_definitions():
    from types import SimpleNamespace

    group = SimpleNamespace(group="Crowd", mean=3.25, sd=0.9, n=6076, source="S", year=2003)
    nameless = SimpleNamespace(group="Male", mean=4.0, sd=1.0, n=None, source="S", year=None)
    inst = SimpleNamespace(
        scales={"extraversion": SimpleNamespace(norms=(group, nameless))}, extra={}
    )
    g = norms.norm_groups(inst)["extraversion"]
    assert [x["name"] for x in g] == ["Crowd", "Male"] and g[1]["n"] is None


def test_omega_refuses_a_singular_correlation_matrix():
    # two distinct answer patterns repeated: rank-1 correlations, no factor model to fit
    d = pd.DataFrame({"a": [1, 5] * 3, "b": [2, 4] * 3, "c": [5, 1] * 3})
    res = reliability.mcdonald_omega(d)
    assert res["omega"] is None and "singular" in res["note"]


def test_icc_needs_enough_ratings():
    long = pd.DataFrame({"t": [1, 1, 2, 2], "r": [0, 1, 0, 1], "y": [1.0, 1.0, 3.0, 2.0]})
    res = reliability.icc(long, "t", "r", "y")
    assert "ICC(A,1)" not in res and "5+ ratings" in res["note"]
