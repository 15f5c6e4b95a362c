"""Population analyses (issue 25, item 3) against published reference output.

References, each named where used:
- lavaan's CFA tutorial (lavaan.ugent.be/tutorial/cfa.html), ``cfa(HS.model,
  data = HolzingerSwineford1939)`` with ``summary(fit, fit.measures = TRUE, standardized =
  TRUE)``: chi-square 85.306, df 24, CFI .931, TLI .896, RMSEA .092 (90% CI .071-.114),
  SRMR .065, Std.all loadings .772 .424 .581 .852 .855 .838 .570 .723 .665 (the output as
  reproduced by r-statistics.co, "SEM and CFA in R with lavaan", and several course notes).
- semTools ``measurementInvariance(model = HS.model, data = HolzingerSwineford1939,
  group = "school")`` as printed in M. Clark (2019), "Comparisons of the Unseen"
  (m-clark.github.io): configural 115.85 (df 48), loadings 124.04 (54), intercepts 164.10
  (60); delta chi-square 8.192 (p .2244) and 40.059 (p 4.435e-07); CFI .923 .921 .882;
  RMSEA .097 .093 .107.
The data are semopy's bundled copy of lavaan's HolzingerSwineford1939 (checked below).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from psymetrics_core.analysis.population.cfa import cfa
from psymetrics_core.analysis.population.data import Responses, ScaleStructure, from_wide
from psymetrics_core.analysis.population.invariance import measurement_invariance
from psymetrics_core.analysis.population.mlfit import GroupMoments, Pattern, fit_ml

HS_MODEL = "visual =~ x1 + x2 + x3\ntextual =~ x4 + x5 + x6\nspeed =~ x7 + x8 + x9"
HS_ITEMS = [f"x{i}" for i in range(1, 10)]
LAVAAN_STD = [0.772, 0.424, 0.581, 0.852, 0.855, 0.838, 0.570, 0.723, 0.665]


@pytest.fixture(scope="module")
def hs() -> pd.DataFrame:
    from semopy.examples import holzinger39

    return holzinger39.get_data()


def test_semopy_ships_lavaans_holzinger_swineford_data(hs: pd.DataFrame) -> None:
    assert hs.shape[0] == 301
    assert hs["school"].value_counts().to_dict() == {"Pasteur": 156, "Grant-White": 145}
    # lavaan: head(HolzingerSwineford1939), row 1; the sample means lavaan prints as intercepts
    row = hs.iloc[0]
    assert [round(float(row[c]), 6) for c in ("x1", "x2", "x3", "x6", "x9")] == [
        3.333333,
        7.75,
        0.375,
        1.285714,
        6.361111,
    ]
    means = hs[HS_ITEMS].mean().round(3).tolist()
    assert means == [4.936, 6.088, 2.25, 3.061, 4.341, 2.186, 4.186, 5.527, 5.374]


def test_cfa_reproduces_lavaans_tutorial(hs: pd.DataFrame) -> None:
    res = cfa(hs, HS_MODEL)
    assert res.reason is None and res.fit is not None
    f = res.fit
    assert f.n == 301 and f.df == 24
    assert f.chisq == pytest.approx(85.306, abs=1e-3)
    assert f.cfi == pytest.approx(0.931, abs=1e-3)
    assert f.tli == pytest.approx(0.896, abs=1e-3)
    assert f.rmsea == pytest.approx(0.092, abs=1e-3)
    assert f.rmsea_ci90 is not None
    assert f.rmsea_ci90 == pytest.approx((0.071, 0.114), abs=1e-3)
    assert f.srmr == pytest.approx(0.065, abs=1e-3)
    assert [ld.item for ld in res.loadings] == HS_ITEMS
    assert [ld.std for ld in res.loadings] == pytest.approx(LAVAAN_STD, abs=2e-3)
    assert res.heywood == []


def test_own_ml_engine_agrees_with_semopy_and_lavaan(hs: pd.DataFrame) -> None:
    """The invariance engine is checked on the single-group model against semopy and lavaan."""
    x = hs[HS_ITEMS].to_numpy(dtype=float)
    res = fit_ml(
        Pattern(9, ((0, 1, 2), (3, 4, 5), (6, 7, 8))),
        [GroupMoments(np.cov(x.T, ddof=0), x.mean(0), 301)],
    )
    assert res.converged and res.df == 24
    assert res.chisq == pytest.approx(cfa(hs, HS_MODEL).fit.chisq, abs=1e-3)  # type: ignore[union-attr]
    std = (res.lam[0] * np.sqrt(np.diag(res.phi[0]))).sum(axis=1) / np.sqrt(np.diag(res.sigma[0]))
    assert std.tolist() == pytest.approx(LAVAAN_STD, abs=1e-3)


def test_invariance_ladder_by_school_matches_semtools(hs: pd.DataFrame) -> None:
    data = from_wide(hs, items=HS_ITEMS, group="school")
    res = measurement_invariance(data, HS_MODEL)
    assert res.reason is None and res.groups == {"Pasteur": 156, "Grant-White": 145}
    conf, metric, scalar = res.steps
    assert [s.level for s in res.steps] == ["configural", "metric", "scalar"]
    assert [s.fit.df for s in res.steps] == [48, 54, 60]
    assert [s.fit.chisq for s in res.steps] == pytest.approx([115.851, 124.044, 164.103], abs=2e-3)
    assert [s.fit.cfi for s in res.steps] == pytest.approx([0.923, 0.921, 0.882], abs=1e-3)
    assert [s.fit.rmsea for s in res.steps] == pytest.approx([0.097, 0.093, 0.107], abs=1e-3)
    assert metric.delta_chisq == pytest.approx(8.192, abs=1e-3)
    assert metric.delta_pvalue == pytest.approx(0.2244, abs=1e-4)
    assert scalar.delta_chisq == pytest.approx(40.059, abs=1e-3)
    assert scalar.delta_pvalue == pytest.approx(4.435e-07, rel=1e-3)
    assert metric.holds is True and scalar.holds is False
    assert "Cheung & Rensvold" in scalar.decision
    assert conf.holds is None


def test_configural_chisq_is_the_sum_of_the_single_group_fits(hs: pd.DataFrame) -> None:
    """An identity needing no reference: means saturated, groups independent."""
    singles = [cfa(hs[hs["school"] == s], HS_MODEL).fit for s in ("Pasteur", "Grant-White")]
    data = from_wide(hs, items=HS_ITEMS, group="school")
    conf = measurement_invariance(data, HS_MODEL).steps[0]
    assert conf.fit.chisq == pytest.approx(sum(f.chisq for f in singles if f), abs=2e-3)


def simulate_two_factor(n: int = 2000, seed: int = 7) -> tuple[pd.DataFrame, np.ndarray]:
    """Two correlated factors (r = .3), three items each, known standardized loadings."""
    rng = np.random.default_rng(seed)
    lam = np.array([0.8, 0.7, 0.6, 0.75, 0.65, 0.55])
    f = rng.multivariate_normal([0, 0], [[1, 0.3], [0.3, 1]], n)
    factor_of = np.array([0, 0, 0, 1, 1, 1])
    x = f[:, factor_of] * lam + rng.standard_normal((n, 6)) * np.sqrt(1 - lam**2)
    return pd.DataFrame(x, columns=[f"i{j}" for j in range(6)]), lam


def test_cfa_recovers_known_loadings_from_a_scale_structure() -> None:
    df, lam = simulate_two_factor()
    structure = ScaleStructure({"A": ("i0", "i1", "i2"), "B": ("i3", "i4", "i5")})
    res = cfa(Responses(df), structure)
    assert res.fit is not None and res.fit.df == 8
    assert [ld.std for ld in res.loadings] == pytest.approx(lam.tolist(), abs=0.05)
    assert res.fit.cfi is not None and res.fit.cfi > 0.99


def test_reverse_keyed_items_are_reversed_before_the_fit() -> None:
    df, lam = simulate_two_factor()
    df["i1"] = 6 - df["i1"]  # stored reversed on a 1..5 scale
    structure = ScaleStructure(
        {"A": ("i0", "i1", "i2"), "B": ("i3", "i4", "i5")}, reverse={"i1": (1, 5)}
    )
    res = cfa(Responses(df), structure)
    assert res.loadings[1].std == pytest.approx(lam[1], abs=0.05)


def test_cfa_names_items_that_never_vary(hs: pd.DataFrame) -> None:
    d = hs.assign(x5=2.0)
    res = cfa(d, HS_MODEL)
    assert res.fit is None and res.loadings == []
    assert res.reason == "items that never vary: x5"


def test_cfa_names_linearly_dependent_items(hs: pd.DataFrame) -> None:
    d = hs.assign(x9=hs["x7"] + hs["x8"])
    res = cfa(d, HS_MODEL)
    assert res.fit is None
    assert res.reason == "covariance matrix not positive definite; dependent items: x7, x8, x9"


def test_cfa_refuses_fewer_respondents_than_parameters(hs: pd.DataFrame) -> None:
    res = cfa(hs.head(15), HS_MODEL)
    assert res.fit is None
    assert res.reason == "15 complete respondents for 9 items and 21 free parameters"


def test_invariance_names_a_group_too_small(hs: pd.DataFrame) -> None:
    d = pd.concat([hs[hs["school"] == "Pasteur"], hs[hs["school"] == "Grant-White"].head(12)])
    res = measurement_invariance(from_wide(d, items=HS_ITEMS, group="school"), HS_MODEL)
    assert res.steps == []
    assert res.reason == "groups too small (need 19+ complete respondents): Grant-White (12)"


def test_invariance_names_an_item_constant_within_a_group(hs: pd.DataFrame) -> None:
    d = hs.copy()
    d.loc[d["school"] == "Pasteur", "x3"] = 1.0
    res = measurement_invariance(from_wide(d, items=HS_ITEMS, group="school"), HS_MODEL)
    assert res.steps == [] and res.reason == "items that never vary in group Pasteur: x3"


def test_bad_model_and_columns_are_one_line_errors(hs: pd.DataFrame) -> None:
    from psymetrics_core.base.errors import PsymError

    with pytest.raises(PsymError, match="variables not in the data: y1"):
        cfa(hs, "f =~ x1 + x2 + y1")
    with pytest.raises(PsymError, match="no group column"):
        measurement_invariance(from_wide(hs, items=HS_ITEMS), HS_MODEL)
    with pytest.raises(PsymError, match="only 'factor =~ item"):
        measurement_invariance(from_wide(hs, items=HS_ITEMS, group="school"), "x1 ~ x2")


def test_cfa_per_scale_on_a_bfi_sized_population_takes_seconds() -> None:
    """Issue 25's design size: 1,250 respondents x 44 items in 5 scales, 5-point answers."""
    import time

    from psymetrics_core.analysis.population.cfa import cfa_by_scale

    rng = np.random.default_rng(5)
    sizes = [8, 9, 9, 8, 10]
    f = rng.multivariate_normal(np.zeros(5), 0.3 + 0.7 * np.eye(5), 1250)
    cols, scales, j = [], {}, 0
    for s, k in enumerate(sizes):
        scales[f"S{s}"] = tuple(f"i{j + m}" for m in range(k))
        for _ in range(k):
            latent = 0.7 * f[:, s] + 0.7 * rng.standard_normal(1250)
            cols.append(np.clip(np.round(3 + 1.2 * latent), 1, 5))
        j += k
    data = Responses(pd.DataFrame(np.column_stack(cols), columns=[f"i{m}" for m in range(44)]))
    structure = ScaleStructure(scales)
    start = time.perf_counter()
    per_scale = cfa_by_scale(data, structure)
    whole = cfa(data, structure)
    took = time.perf_counter() - start
    assert all(r.fit is not None for r in per_scale.values()) and whole.fit is not None
    assert whole.fit.df == 44 * 45 // 2 - (44 - 5 + 44 + 15)
    assert took < 30, f"5 one-factor CFAs and one 5-factor CFA took {took:.1f} s"
