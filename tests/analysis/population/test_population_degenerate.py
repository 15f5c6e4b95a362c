"""Degenerate population data give reasons, not numbers presented as meaningful (issue 25;
found by a newcomer trial): CFI/TLI when the items do not covary, boundary (Heywood)
solutions, prorated scale scores of a few answered items, criterion validity against text
labels and against repeats of one persona, an invariance ladder without CFI."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2, mannwhitneyu

from psymetrics_core.analysis.population.cfa import cfa
from psymetrics_core.analysis.population.criterion import criterion_row, label_values
from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.diagnostics import scale_scores
from psymetrics_core.analysis.population.fitstats import fit_indices
from psymetrics_core.analysis.population.invariance import _compare


def test_cfi_and_tli_are_undefined_when_the_independence_model_is_not_rejected() -> None:
    # baseline chi2 36.05 on 36 df (p .47, scipy): CFI/TLI would compare misfit with nothing
    f = fit_indices(25.04, 27, (36.05, 36), 60)
    assert f.cfi is None and f.tli is None
    assert f.reason is not None and f"p {chi2.sf(36.05, 36):.2f}" in f.reason
    assert f.rmsea == 0.0  # RMSEA and chi2 stay: they do not need the baseline
    # a baseline that is rejected: lavaan's formulas, by hand (H&S: 918.852 on 36 df)
    g = fit_indices(85.306, 24, (918.852, 36), 301)
    assert g.reason is None
    assert g.cfi == pytest.approx(1 - (85.306 - 24) / (918.852 - 36), abs=1e-12)
    assert g.tli == pytest.approx((918.852 / 36 - 85.306 / 24) / (918.852 / 36 - 1), abs=1e-12)


def test_the_ladder_makes_no_decision_without_cfi() -> None:
    flat = fit_indices(40.0, 44, (50.0, 55), 120, 2)
    step = _compare(
        "metric", fit_indices(45.0, 50, (50.0, 55), 120, 2), _compare("configural", flat, None)
    )
    assert step.holds is None and step.decision.startswith("no decision: the items do not covary")


def test_a_loading_at_the_boundary_is_a_heywood_case(caplog: pytest.LogCaptureFixture) -> None:
    """x1 is the factor itself (no residual variance): its standardized loading sits at 1."""
    rng = np.random.default_rng(3)
    f = rng.normal(size=400)
    data = pd.DataFrame({"x1": f, **{f"x{i}": f + rng.normal(size=400) for i in (2, 3, 4)}})
    with caplog.at_level(logging.WARNING):
        res = cfa(data, ScaleStructure({"F": ("x1", "x2", "x3", "x4")}))
    assert res.fit is not None and any(h.startswith("x1: ") for h in res.heywood), res.heywood
    assert not [r for r in caplog.records if "converge" in r.getMessage()]


def test_scale_scores_need_half_the_items_answered() -> None:
    values = pd.DataFrame(
        {
            "a": [1.0, 2.0, np.nan],
            "b": [3.0, np.nan, np.nan],
            "c": [5.0, np.nan, np.nan],
            "d": [3.0, 4.0, 1.0],
        },
        index=["r1", "r2", "r3"],
    )
    s = scale_scores(Responses(values), ScaleStructure({"S": ("a", "b", "c", "d")}))["S"]
    assert s[0] == pytest.approx(3.0)  # 4 of 4: (1 + 3 + 5 + 3) / 4
    assert s[1] == pytest.approx(3.0)  # 2 of 4 (half): (2 + 4) / 2
    assert np.isnan(s[2])  # 1 of 4: no score


def test_two_text_values_are_a_binary_label_with_a_named_positive_level() -> None:
    y, positive, why = label_values("sex", pd.Series(["f", "m", "m", None, "f"]))
    assert positive == "m" and why is None
    assert y is not None and np.array_equal(y[[0, 1, 2, 4]], [0.0, 1.0, 1.0, 0.0])
    assert np.isnan(y[3])
    y, positive, why = label_values("region", pd.Series(["north", "south", "east", "west"]))
    assert y is None and why is not None and "has 4 text values" in why


def test_criterion_against_a_text_label_is_the_auc_of_its_levels() -> None:
    rng = np.random.default_rng(5)
    sex = pd.Series(["f", "m"] * 30, index=[f"r{i}" for i in range(60)])
    x = rng.normal(size=60) + (sex == "m").to_numpy() * 1.0
    row = criterion_row("care", "sex", x, sex, pd.Series(sex.index, index=sex.index))
    # independent: the Mann-Whitney U of the "m" scores over the "f" scores / (n1 n0), scipy
    m, f = x[(sex == "m").to_numpy()], x[(sex == "f").to_numpy()]
    ref = mannwhitneyu(m, f).statistic / (len(m) * len(f))
    assert row.result.statistic == "auc" and row.positive == "m" and row.result.n == 60
    assert row.result.value == pytest.approx(ref, abs=1e-12)


def test_repeats_of_one_persona_are_one_unit_of_criterion_validity() -> None:
    """Two identical repeats of 30 personas: the persona is the unit (n 30, the same rho)."""
    rng = np.random.default_rng(9)
    level = rng.integers(1, 10, size=30).astype(float)
    x = level + rng.normal(size=30)
    keys = [f"p{i}|{r}" for r in (0, 1) for i in range(30)]
    persona = pd.Series([f"p{i}" for _ in (0, 1) for i in range(30)], index=keys)
    label = pd.Series(np.concatenate([level, level]), index=keys)
    twice = criterion_row("e", "e", np.concatenate([x, x]), label, persona)
    once = criterion_row("e", "e", x, pd.Series(level), pd.Series([f"p{i}" for i in range(30)]))
    assert twice.unit == "persona" and twice.result.n == 30 and once.unit == "respondent"
    assert twice.result.value == pytest.approx(once.result.value)
    assert twice.result.ci95 == once.result.ci95


def test_an_efa_item_without_uniqueness_is_a_heywood_case() -> None:
    """x1 is factor 1 itself: its uniqueness goes to 0 (a boundary solution), named."""
    from psymetrics_core.analysis.population.dimensionality import efa

    rng = np.random.default_rng(3)
    f = rng.normal(size=(500, 2))
    cols = {"x1": f[:, 0]}
    cols |= {f"x{i}": f[:, 0] + rng.normal(size=500) for i in (2, 3, 4)}
    cols |= {f"y{i}": f[:, 1] + rng.normal(size=500) for i in (1, 2, 3, 4)}
    data = pd.DataFrame(cols)
    res = efa(data, 2, "varimax")
    assert res.reason is None and [h.split(":")[0] for h in res.heywood] == ["x1"]


def test_the_reports_parallel_analysis_keeps_the_sequential_count() -> None:
    """Eigenvalues 3.0 > 1.2, 1.0 < 1.1, then 1.05 > 1.0: one factor retained, only the first
    row marked kept (the later one above its random value is not a factor)."""
    from psymetrics_core.analysis.population.dimensionality import ParallelAnalysis
    from psymetrics_core.report.population_sections import _parallel

    pa = ParallelAnalysis(1, (3.0, 1.0, 1.05), (1.2, 1.1, 1.0), 0.95)
    assert [r["kept"] for r in _parallel(pa)["rows"]] == [True, False, False]


def test_a_cfa_model_whose_items_two_tasks_share_needs_its_task(tmp_path) -> None:
    """bfi and pb-epqr both number their items 1, 2, ...: a model over 1, 2, 3 is ambiguous."""
    from psymetrics_core.analysis.population.population_data import PopulationData
    from psymetrics_core.analysis.population.structure import (
        StructureOptions,
        check_options,
        read_cfa_model,
    )
    from psymetrics_core.base.errors import PsymError

    (tmp_path / "m.lav").write_text("F =~ 1 + 2 + 3\n")
    values = pd.DataFrame(np.ones((4, 5)), columns=[str(i) for i in range(1, 6)])
    empty = pd.DataFrame(index=values.index)
    found = {
        t: PopulationData(t, values, pd.Series(values.index), empty) for t in ("bfi", "pb-epqr")
    }
    with pytest.raises(
        PsymError, match=r"items of several tasks here \(bfi, pb-epqr\): write --cfa-model TASK="
    ):
        check_options(found, StructureOptions(cfa_model=read_cfa_model(tmp_path / "m.lav")))
    model = read_cfa_model(f"bfi={tmp_path / 'm.lav'}")
    assert model.task == "bfi" and model.path == str(tmp_path / "m.lav")
    check_options(found, StructureOptions(cfa_model=model))  # named: no error
    with pytest.raises(PsymError, match="no population task 'mfq' here"):
        check_options(
            found, StructureOptions(cfa_model=read_cfa_model(f"mfq={tmp_path / 'm.lav'}"))
        )
