"""The fidelity metrics (analysis.fidelity) against independent computations: scipy's
``wasserstein_distance``, ``jensenshannon`` and ``ks_2samp``, and values worked by hand from the
authors' definitions (OpinionQA's ``get_max_wd``: max - min of the ordinal positions, Santurkar
et al. 2023; SimBench's data-set-level normaliser, Hu et al. 2025; Huang, Wu & Wang's 2025 k̂)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import ks_2samp, wasserstein_distance

from psymetrics_core.analysis.fidelity import FidelityOptions, fidelity, metrics
from psymetrics_core.analysis.fidelity.khat import k_hat_of_values
from psymetrics_core.pluginsys.session import Session

POS = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]])
P = np.array([[0.1, 0.2, 0.3, 0.25, 0.15]])
Q = np.array([[0.3, 0.3, 0.2, 0.1, 0.1]])


def test_w1_is_scipys_wasserstein_over_the_positions_divided_by_their_range():
    want = wasserstein_distance(POS[0], POS[0], P[0], Q[0]) / 4.0
    assert metrics.w1(P, Q, POS)[0] == pytest.approx(want, abs=1e-12)
    # by hand: CDF differences -0.2, -0.3, -0.2, -0.05 over unit gaps -> 0.75 / 4
    assert metrics.w1(P, Q, POS)[0] == pytest.approx(0.75 / 4)


def test_w1_normaliser_is_the_positions_range_not_the_option_count():
    # OpinionQA: positions 1, 2, 1.5 (a middle option listed last) have range 1, not K - 1 = 2;
    # sorted by position: 1, 1.5, 2. All mass at 1 vs all at 2: W1 = 1 / 1 = 1.
    pos = np.array([[1.0, 1.5, 2.0]])
    p, q = np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 0.0, 1.0]])
    assert metrics.w1(p, q, pos)[0] == pytest.approx(1.0)
    # mass at 1 vs at the middle option 1.5: 0.5 / 1
    assert metrics.w1(p, np.array([[0.0, 1.0, 0.0]]), pos)[0] == pytest.approx(0.5)


def test_refusals_are_removed_and_both_sides_renormalised():
    # the same substantive answers with 40% refusals on one side: the same W1 and TV
    with_refusals = P * 0.6
    assert metrics.w1(with_refusals, Q, POS)[0] == pytest.approx(metrics.w1(P, Q, POS)[0])
    assert metrics.tv(with_refusals, Q, POS)[0] == pytest.approx(metrics.tv(P, Q, POS)[0])


def test_tv_jsd_and_ks_against_hand_values_and_scipy():
    # TV by hand: 0.5 * (0.2 + 0.1 + 0.1 + 0.15 + 0.05) = 0.3
    assert metrics.tv(P, Q, POS)[0] == pytest.approx(0.3)
    assert metrics.jsd(P, Q, POS)[0] == pytest.approx(jensenshannon(P[0], Q[0], base=2) ** 2)
    # KS: scipy's two-sample statistic on samples with these shares (counts x 20)
    a = np.repeat(POS[0], (P[0] * 20).round().astype(int))
    b = np.repeat(POS[0], (Q[0] * 20).round().astype(int))
    assert metrics.ks(P, Q, POS)[0] == pytest.approx(ks_2samp(a, b).statistic)


def test_undefined_cases_are_nan():
    one = np.array([[2.0, 2.0]])  # one position: no ordinal distance
    assert np.isnan(metrics.w1(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]), one)[0])
    # all refusals on the model side: no substantive mass
    assert np.isnan(metrics.w1(np.zeros((1, 5)), Q, POS)[0])
    assert np.isnan(metrics.tv_uniform(np.array([[1.0]]), np.array([[True]]))[0])


def _table(path: Path, rows: list[tuple[str, str, float]]) -> Path:
    path.write_text("item,option,share\n" + "".join(f"{i},{o},{s}\n" for i, o, s in rows))
    return path


def test_simbench_uses_the_data_set_level_normaliser(tmp_path: Path):
    # item a: human (0.8, 0.2), model (0.5, 0.5): TV 0.3, TV(human, uniform) 0.3
    # item b: human (0.5, 0.5), model (0.4, 0.6): TV 0.1, TV(human, uniform) 0
    # norm = (0.3 + 0) / 2 = 0.15; score = 100 * (1 - 0.2 / 0.15) = -33.3 (worse than uniform);
    # a per-item ratio would divide item b's 0.1 by 0 (SimBench normalises per data set)
    human = _table(
        tmp_path / "h.csv", [("a", "1", 0.8), ("a", "2", 0.2), ("b", "1", 0.5), ("b", "2", 0.5)]
    )
    model = _table(
        tmp_path / "m.csv", [("a", "1", 0.5), ("a", "2", 0.5), ("b", "1", 0.4), ("b", "2", 0.6)]
    )
    r = fidelity(model, human, Session(), FidelityOptions(n_boot=0))
    assert r.norm.value == pytest.approx(0.15)
    assert r.norm_items == ["a", "b"]
    assert r.overall.simbench.value == pytest.approx(100 * (1 - 0.2 / 0.15))
    assert r.items[1].simbench.value == pytest.approx(100 * (1 - 0.1 / 0.15))
    # representativeness = 1 - mean W1 (two options at 1, 2: W1 = TV here): 1 - 0.2
    assert r.overall.representativeness.value == pytest.approx(0.8)


def test_simbench_is_null_when_humans_are_uniform_everywhere(tmp_path: Path):
    human = _table(tmp_path / "h.csv", [("a", "1", 0.5), ("a", "2", 0.5)])
    model = _table(tmp_path / "m.csv", [("a", "1", 0.9), ("a", "2", 0.1)])
    r = fidelity(model, human, Session(), FidelityOptions(n_boot=0))
    assert r.overall.simbench.value is None and "normaliser" in (r.overall.simbench.reason or "")
    assert r.overall.tv.value == pytest.approx(0.4)


def test_all_refusals_item_is_null_with_its_reason(tmp_path: Path):
    human = _table(
        tmp_path / "h.csv", [("a", "1", 0.5), ("a", "2", 0.5), ("b", "1", 0.3), ("b", "2", 0.7)]
    )
    model = _table(
        tmp_path / "m.csv",
        [("a", "1", 0.0), ("a", "2", 0.0), ("a", "refused", 1.0), ("b", "1", 0.3), ("b", "2", 0.7)],
    )
    r = fidelity(model, human, Session(), FidelityOptions(n_boot=0))
    a = r.items[0]
    assert a.w1.value is None and "model side" in (a.w1.reason or "")
    assert a.model.nonsub == (1.0, 0.0, 0.0)
    assert r.overall.items == 1 and r.overall.w1.value == pytest.approx(0.0)


def test_khat_collapses_to_k_min_for_a_model_that_samples_the_humans_exactly():
    # the model's answers are draws from the human distribution itself: k̂ is still k_min = 2,
    # because at k = 3 a three-answer interval misses on far more than alpha*gamma of the items
    rng = np.random.default_rng(5)
    human, model = {}, {}
    for i in range(25):
        shares = rng.dirichlet(np.ones(6))
        values = np.linspace(0, 1, 6)
        human[f"i{i}"] = rng.choice(values, size=2800, p=shares)
        model[f"i{i}"] = rng.choice(values, size=400, p=shares)
    k = k_hat_of_values(model, human, k_min=2)
    assert k.value == 2
    assert k.miscoverage[0] == 0 and k.miscoverage[1] == 0 and k.miscoverage[2] > 0.025


def test_khat_by_hand():
    # one item; humans 0, 1, 0, 1 (mean 0.5, s = 0.57735, n 4): gamma 0.5 -> z = 0.67449,
    # interval 0.5 ± 0.19471. Model 0.5, 0.5, 0.5, 0.5: from k = 3 (> k_min 2) its interval has
    # width 0 and misses -> G = (0, 0, 1, 1), k̂ = 2.
    k = k_hat_of_values({"a": np.full(4, 0.5)}, {"a": np.array([0.0, 1, 0, 1])})
    assert k.miscoverage == (0.0, 0.0, 1.0, 1.0) and k.value == 2
    # model 0, 1, 0, 1, 0, 1: at k = 3 the interval is 1/3 ± sqrt(2) * 1.95996 * 0.57735 / sqrt(3)
    # = 1/3 ± 0.9239, which holds 0.5 ± 0.1947: covered at every k -> k̂ = k_max = 6
    k = k_hat_of_values({"a": np.array([0.0, 1, 0, 1, 0, 1])}, {"a": np.array([0.0, 1, 0, 1])})
    assert k.value == 6 and k.k_max == 6


def test_a_constant_model_is_flagged_degenerate(tmp_path: Path):
    human = _table(
        tmp_path / "h.csv", [("a", "1", 0.5), ("a", "2", 0.5), ("b", "1", 0.3), ("b", "2", 0.7)]
    )
    model = _table(
        tmp_path / "m.csv", [("a", "1", 1.0), ("a", "2", 0.0), ("b", "1", 1.0), ("b", "2", 0.0)]
    )
    r = fidelity(model, human, Session(), FidelityOptions(n_boot=0))
    assert any(n.startswith("degenerate: ") and "2 of 2 items (option 1)" in n for n in r.notes)
    varied = _table(
        tmp_path / "v.csv", [("a", "1", 0.6), ("a", "2", 0.4), ("b", "1", 1.0), ("b", "2", 0.0)]
    )
    r = fidelity(varied, human, Session(), FidelityOptions(n_boot=0))
    assert not any(n.startswith("degenerate") for n in r.notes)  # 1 of 2 items: not most
