"""Population reliability, dimensionality, criterion validity and diagnostics (issue 25).

Independent references named per test: pingouin (alpha), scikit-learn (the squared multiple
correlations of lambda 6; the AUC), statsmodels' ML factor analysis via the core's
``omega_from_corr`` (omega), scipy (Spearman's rho), hand arithmetic for the rest.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from psymetrics_core.analysis.population.criterion import auc, spearman
from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.diagnostics import diagnose
from psymetrics_core.analysis.population.dimensionality import (
    efa,
    parallel_analysis,
    tucker_congruence,
)
from psymetrics_core.analysis.population.reliability import (
    alpha,
    lambda6,
    omega_total,
    scale_reliability,
)


def congeneric(n: int = 600, lam: tuple[float, ...] = (0.8, 0.7, 0.6, 0.5, 0.4), seed: int = 3):
    rng = np.random.default_rng(seed)
    la = np.array(lam)
    f = rng.standard_normal((n, 1))
    return f * la + rng.standard_normal((n, len(la))) * np.sqrt(1 - la**2)


def test_alpha_matches_pingouin() -> None:
    import pingouin as pg

    x = congeneric()
    ref = pg.cronbach_alpha(pd.DataFrame(x))[0]
    assert alpha(x) == pytest.approx(ref, abs=1e-10)


def test_lambda6_from_squared_multiple_correlations_by_regression() -> None:
    from sklearn.linear_model import LinearRegression

    x = congeneric()
    z = (x - x.mean(0)) / x.std(0)
    smc = [
        LinearRegression().fit(np.delete(z, j, 1), z[:, j]).score(np.delete(z, j, 1), z[:, j])
        for j in range(z.shape[1])
    ]
    ref = 1 - np.sum(1 - np.array(smc)) / np.corrcoef(x.T).sum()
    assert lambda6(x) == pytest.approx(ref, abs=1e-10)


def test_omega_matches_statsmodels_ml_factor_and_keeps_signs() -> None:
    from psymetrics_core.analysis.reliability import omega_from_corr

    x = congeneric()
    ref = omega_from_corr(np.corrcoef(x.T), len(x))["omega"]
    assert omega_total(x) == pytest.approx(ref, abs=1e-3)
    flipped = x.copy()
    flipped[:, 4] = -flipped[:, 4]  # an unreversed item: its negative loading lowers omega
    assert omega_total(flipped) < omega_total(x) - 0.02


def test_cluster_bootstrap_is_wider_than_naive_for_prompt_variants() -> None:
    """50 personas x 25 near-identical prompt variants: 1,250 rows but 50 independent units."""
    rng = np.random.default_rng(11)
    base = congeneric(n=50, seed=5)
    x = np.repeat(base, 25, axis=0) + rng.normal(0, 0.1, (1250, 5))
    data = Responses(
        pd.DataFrame(x, columns=list("abcde")), cluster=pd.Series(np.repeat(range(50), 25))
    )
    rel = scale_reliability(data, ScaleStructure({"S": tuple("abcde")}), n_boot=200)[0]
    assert rel.n == 1250 and rel.n_clusters == 50
    for c in rel.coefficients:
        assert c.value is not None and c.naive_ci95 and c.cluster_ci95, c
        naive = c.naive_ci95[1] - c.naive_ci95[0]
        clustered = c.cluster_ci95[1] - c.cluster_ci95[0]
        assert clustered > 2.5 * naive, (c.name, naive, clustered)


def test_reliability_names_items_that_never_vary() -> None:
    x = pd.DataFrame(congeneric(n=40), columns=list("abcde"))
    x["c"] = 3.0
    rel = scale_reliability(Responses(x), ScaleStructure({"S": tuple("abcde")}), n_boot=0)[0]
    assert rel.coefficients == [] and rel.reason == "items that never vary: c"


def test_omega_names_linearly_dependent_items() -> None:
    x = pd.DataFrame(congeneric(n=80), columns=list("abcde"))
    x["e"] = x["a"] + x["b"]
    rel = scale_reliability(Responses(x), ScaleStructure({"S": tuple("abcde")}), n_boot=0)[0]
    by = {c.name: c for c in rel.coefficients}
    assert by["alpha"].value is not None
    assert by["omega_total"].value is None
    assert by["omega_total"].reason == "item correlations singular; dependent items: a, b, e"


def two_factor(n: int = 1000, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    f = rng.standard_normal((n, 2))
    lam = np.array([[0.8, 0], [0.7, 0], [0.6, 0], [0, 0.8], [0, 0.7], [0, 0.6]])
    x = f @ lam.T + rng.standard_normal((n, 6)) * np.sqrt(1 - (lam**2).sum(1))
    return pd.DataFrame(x, columns=[f"i{j}" for j in range(6)])


def test_parallel_analysis_finds_the_simulated_factors() -> None:
    assert parallel_analysis(two_factor()).n_factors == 2
    assert parallel_analysis(pd.DataFrame(congeneric())).n_factors == 1


def test_efa_with_named_rotation_and_congruence_with_human_loadings() -> None:
    res = efa(two_factor(), 2, rotation="varimax", method="ml")
    assert res.loadings is not None
    human = pd.DataFrame(
        {"A": [0.8, 0.7, 0.6, 0, 0, 0], "B": [0, 0, 0, 0.8, 0.7, 0.6]},
        index=[f"i{j}" for j in range(6)],
    )
    phi = tucker_congruence(res.loadings, human)
    assert set(phi) == {"A", "B"} and min(phi.values()) > 0.95


def test_tucker_congruence_by_hand() -> None:
    # phi = (1*1 + 2*1 + 3*0) / sqrt(14 * 2) = 3 / sqrt(28); factors matched across a swap
    ours = pd.DataFrame({"F1": [0.0, 0.0, 1.0], "F2": [1.0, 2.0, 3.0]}, index=list("abc"))
    human = pd.DataFrame({"H": [1.0, 1.0, 0.0]}, index=list("abc"))
    assert tucker_congruence(ours, human)["H"] == pytest.approx(3 / np.sqrt(28))


def test_efa_refuses_an_unknown_rotation() -> None:
    from psymetrics_core.base.errors import PsymError

    with pytest.raises(PsymError, match="rotation 'spin' unknown"):
        efa(two_factor(), 2, rotation="spin")


def test_spearman_and_its_bonett_wright_interval() -> None:
    from scipy.stats import spearmanr

    rng = np.random.default_rng(4)
    label = rng.integers(1, 10, 200).astype(float)
    score = label + rng.normal(0, 3, 200)
    res = spearman(score, label)
    rho = spearmanr(score, label).statistic
    se = np.sqrt((1 + rho**2 / 2) / 197)
    assert res.value == pytest.approx(rho)
    z = np.arctanh(rho)
    ref = (np.tanh(z - 1.959964 * se), np.tanh(z + 1.959964 * se))
    assert res.ci95 == pytest.approx(ref, abs=1e-6)


def test_auc_matches_sklearn_and_delong_interval_covers_bootstrap() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 300)
    s = np.round(y * 0.8 + rng.normal(0, 1, 300), 1)  # rounded: ties exist
    res = auc(s, y)
    assert res.value == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    boots = []
    for _ in range(400):
        i = rng.integers(0, 300, 300)
        boots.append(roc_auc_score(y[i], s[i]))
    lo, hi = np.percentile(boots, [2.5, 97.5])
    assert res.ci95 is not None
    assert res.ci95[0] == pytest.approx(lo, abs=0.015) and res.ci95[1] == pytest.approx(
        hi, abs=0.015
    )


def test_criterion_reasons_for_degenerate_labels() -> None:
    assert spearman(np.arange(10.0), np.ones(10)).reason == "the labels never vary"
    assert auc(np.arange(10.0), np.zeros(10)).value is None
    assert spearman(np.arange(3.0), np.arange(3.0)).reason == "3 complete pairs (needs 4+)"


def test_diagnostics_by_hand() -> None:
    v = pd.DataFrame({"a": [1, 5, 3, 3], "b": [1, 4, 3, 2], "c": [1, 5, 3, 4], "k": [4, 4, 4, 4.0]})
    d = diagnose(
        Responses(v),
        ScaleStructure({"S": ("a", "b")}, reverse={"b": (1, 5)}),
        midpoint=3.0,
        human_sd={"S": 1.0},
    )
    assert d.constant_items == ["k"] and d.constant_share == 0.25
    assert d.straightlining_share == 0.0  # nobody answers every item alike (k is 4 for all)
    assert d.acquiescence == pytest.approx(np.mean([7 / 4, 18 / 4, 13 / 4, 13 / 4]) - 3)
    # keyed scale scores (a + (6 - b)) / 2: 3, 3.5, 3, 3.5 -> sample variance 1/12
    (vr,) = d.variance_ratios
    assert vr.ratio == pytest.approx(1 / 12)
