"""The graded response model per scale (issue 25, ``psym analyze --irt``): parameter recovery
on data simulated from known parameters, the test information against Samejima's closed form,
the reasons given for degenerate data, and the ``irt`` key of ``--responses`` and population
runs.

References: the simulating model itself (Samejima's GRM with the parameters below; the ML
estimates converge to them), and the closed form of the GRM item information (Samejima 1969;
Baker & Kim 2004, eq. 8.30), I(theta) = sum_k (P*'_k-1 - P*'_k)^2 / P_k with
P*' = a P* (1 - P*), computed here in numpy independently of the engine, with one value
worked by hand; and girth 0.8.0's ``grm_mml``, an independent marginal-ML implementation.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from binary_population import binary_bfi_run
from click.testing import CliRunner

from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.irt import THETA, graded_response, grm_scale
from psymetrics_core.cli import cli
from psymetrics_core.pluginsys.session import Session

A = np.array([0.8, 1.1, 1.4, 1.7, 2.1, 2.5])
B = np.array(
    [
        [-2.0, -1.0, 0.0, 1.0],
        [-1.5, -0.5, 0.5, 1.5],
        [-1.0, -0.3, 0.4, 1.2],
        [-2.2, -1.2, -0.2, 0.8],
        [-0.8, 0.0, 0.8, 1.8],
        [-1.8, -0.9, 0.1, 1.0],
    ]
)
ITEMS = [f"i{j + 1}" for j in range(6)]


def simulate(n: int, seed: int) -> pd.DataFrame:
    """Answers 1..5 from the GRM with ``A`` and ``B`` (theta ~ N(0, 1)); item i4 is stored
    reverse-keyed (6 - x), as a questionnaire's reversed item would be answered."""
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(n)
    above = 1 / (1 + np.exp(-A[None, :, None] * (theta[:, None, None] - B[None])))
    x = 1 + (rng.random((n, 6))[:, :, None] < above).sum(axis=2)
    x[:, 3] = 6 - x[:, 3]
    return pd.DataFrame(x.astype(float), columns=ITEMS)


STRUCTURE = ScaleStructure({"S": tuple(ITEMS)}, {"i4": (1.0, 5.0)})


def grm_information(a: float, b: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Samejima's closed-form item information of one GRM item at ``theta``."""
    star = 1 / (1 + np.exp(-a * (theta[:, None] - np.asarray(b)[None, :])))
    star = np.hstack([np.ones((len(theta), 1)), star, np.zeros((len(theta), 1))])
    slope = a * star * (1 - star)
    prob = star[:, :-1] - star[:, 1:]
    return ((slope[:, :-1] - slope[:, 1:]) ** 2 / prob).sum(axis=1)


def test_closed_form_by_hand() -> None:
    # a = 1.5, b = (-1, 1), theta = 0: P*1 = 1/(1+e^-1.5) = .817574, P*2 = .182426,
    # P*' = 1.5 * .817574 * .182426 = .223720 for both; P0 = P2 = .182426, P1 = .635149:
    # I = .223720^2/.182426 + 0 + .223720^2/.182426 = 2 * .0500505/.182426 = .548722
    assert grm_information(1.5, np.array([-1.0, 1.0]), np.array([0.0]))[0] == pytest.approx(
        0.548722, abs=1e-6
    )


def test_recovers_the_simulating_parameters() -> None:
    """Ten replications of n = 2,000. Bars from 20 seeded replications: the largest mean bias
    was .063 (a) and .058 (b), the largest RMSE .154 (a = 2.5) and .13 (b); the Monte Carlo
    error of a 10-replication mean is about .04. An engine that returned intercepts
    (d = -a b) instead of thresholds, or ignored the reverse key, fails."""
    est_a, est_b = [], []
    for seed in range(1, 11):
        res = graded_response(Responses(simulate(2000, seed)), STRUCTURE)["S"]
        assert res.reason is None and res.n == 2000, res.reason
        est_a.append([it.discrimination for it in res.items])
        est_b.append([it.thresholds for it in res.items])
    a, b = np.array(est_a), np.array(est_b)
    assert np.abs(a.mean(axis=0) - A).max() < 0.08
    assert np.abs(b.mean(axis=0) - B).max() < 0.08
    assert np.sqrt(((a - A) ** 2).mean(axis=0)).max() < 0.2
    assert np.sqrt(((b - B) ** 2).mean(axis=0)).max() < 0.2
    # one run alone, within the bars the issue names
    assert np.abs(a[0] - A).max() < 0.15 and np.abs(b[0] - B).max() < 0.2


def test_information_is_the_sum_of_the_closed_form_item_informations() -> None:
    res = graded_response(Responses(simulate(2000, 1)), STRUCTURE)["S"]
    theta = np.asarray(THETA)
    assert theta[0] == -4.0 and theta[-1] == 4.0 and len(theta) == 33
    hand = sum(
        grm_information(it.discrimination, np.array(it.thresholds), theta) for it in res.items
    )
    assert res.information == pytest.approx(hand.tolist(), rel=1e-6)
    # peaks inside the thresholds' span, where the discriminating items separate
    assert -1.5 < theta[int(np.argmax(hand))] < 1.0


def test_agrees_with_an_independent_implementation() -> None:
    """girth 0.8.0 (grm_mml: its own marginal-ML EM, no code shared with mirt) on the same keyed
    answers: while choosing the engine the two agreed within .0102 (a) and .0149 (b) on seeds
    1-3; a mis-keyed item, a wrong parameterization or a different model would differ by
    tenths."""
    import girth  # test-only reference (requirements-dev.txt)

    for seed in (1, 2):
        keyed = STRUCTURE.keyed(simulate(2000, seed))
        ours = grm_scale("S", keyed)
        ref = girth.grm_mml(keyed.to_numpy().astype(int).T)  # items x respondents, 1..K
        a = np.array([it.discrimination for it in ours.items])
        b = np.array([it.thresholds for it in ours.items])
        assert np.abs(a - ref["Discrimination"]).max() < 0.02
        assert np.abs(b - ref["Difficulty"]).max() < 0.03


def test_an_unused_category_is_collapsed() -> None:
    data = simulate(2000, 2)
    data["i1"] = data["i1"].replace(3.0, 4.0)  # nobody answers 3 to i1
    res = grm_scale("S", STRUCTURE.keyed(data))
    assert res.reason is None
    first = res.items[0]
    assert first.categories == (1.0, 2.0, 4.0, 5.0) and len(first.thresholds) == 3
    # the thresholds left: 1|2 (b_11), 2|4 (P(X >= 4) is P(X >= 3) of the simulation: b_12),
    # 4|5 (b_14)
    assert first.thresholds[2] == pytest.approx(B[0, 3], abs=0.2)
    assert first.thresholds[1] == pytest.approx(B[0, 1], abs=0.2)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda d: d.assign(i2=3.0), "items that never vary: i2"),
        (lambda d: d.assign(i3=d["i3"] / 2), "answers that are not whole numbers (categories): i3"),
        (lambda d: d.head(12), "12 respondents for 24 parameters (6 items)"),
        (lambda d: d[["i1", "i2"]], "2 item(s) (i1, i2); the model needs at least 3"),
        (lambda d: d.assign(i5=6 - d["i5"]), "items negatively related to the rest of the scale"),
        (
            lambda d: d.assign(i6=np.where(np.arange(len(d)) == 0, 5.0, 1.0)),
            "estimates at the estimator's bounds: a threshold at the bound ±6 (a category almost "
            "never used): i6",
        ),
        (
            lambda d: pd.DataFrame({i: np.tile([1.0, 5.0], 100) for i in ITEMS}),
            "discrimination at the upper bound 5 (answers determined by the others): i1, i2, i3",
        ),
    ],
    ids=["constant", "fractions", "few-respondents", "two-items", "negative", "sparse", "guttman"],
)
def test_degenerate_data_give_a_reason_and_no_numbers(change, reason: str) -> None:
    res = grm_scale("S", change(STRUCTURE.keyed(simulate(2000, 1))))
    assert res.reason is not None and reason in res.reason, res.reason
    assert res.items == [] and res.information is None


def test_a_fit_stopped_before_convergence_gives_no_numbers() -> None:
    res = grm_scale("S", STRUCTURE.keyed(simulate(2000, 1)), max_iter=3)
    assert res.reason == "the fit did not converge in 3 EM iterations"
    assert res.items == [] and res.information is None


def test_missing_answers_are_left_out_not_filled() -> None:
    data = simulate(2000, 4)
    data = data.mask(np.random.default_rng(0).random(data.shape) < 0.15)
    data.loc[0] = np.nan  # a respondent with no answer at all is dropped
    res = graded_response(Responses(data), STRUCTURE, missing="fiml")["S"]
    assert res.reason is None and res.n == 1999
    assert np.abs(np.array([it.discrimination for it in res.items]) - A).max() < 0.3
    # --missing listwise (the default): the complete rows only, counted by hand
    lw = graded_response(Responses(data), STRUCTURE)["S"]
    assert lw.n == int(data.notna().all(axis=1).sum()) and lw.rows is not None
    assert lw.rows.dropped == f"{2000 - lw.n} rows with an unanswered item left out"


# --- the CLI: --responses and population runs ---------------------------------------------

SPEC = """\
schema_version: 1
id: grm6
name: Graded test scale
version: "1"
citation: none (simulated for the test)
license: {status: test}
item_source: test
forms: {original: items.csv}
response_scales:
  default: {min: 1, max: 5, labels: [one, two, three, four, five]}
scales:
  S: {method: mean}
prompt: {instruction: Answer.}
"""
ITEMS_CSV = "id,text,scale,reverse\n" + "".join(f"{i},item {i},S,{int(i == 'i4')}\n" for i in ITEMS)


@pytest.fixture
def psym(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "instruments" / "grm6"
    root.mkdir(parents=True)
    (root / "instrument.yaml").write_text(SPEC)
    (root / "items.csv").write_text(ITEMS_CSV)
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(tmp_path / "instruments"))
    session = Session()
    return lambda *args: CliRunner().invoke(cli, list(args), obj=session)


def _long_file(path: Path, n: int) -> Path:
    wide = simulate(n, 5)
    wide.insert(0, "respondent", [f"r{k}" for k in range(n)])
    wide.melt("respondent", var_name="item", value_name="response").to_csv(path, index=False)
    return path


def test_responses_with_irt_give_the_irt_key_and_a_text_block(tmp_path: Path, psym) -> None:
    path = _long_file(tmp_path / "long.csv", 1500)
    res = psym("analyze", "--task", "grm6", "--responses", str(path), "--irt", "--json")
    assert res.exit_code == 0, res.output
    irt = json.loads(res.output)["population"]["all"]["irt"]["S"]
    assert irt["model"] == "graded" and irt["n"] == 1500 and irt["reason"] is None
    assert [i["item"] for i in irt["items"]] == ITEMS
    got = np.array([i["discrimination"] for i in irt["items"]])
    assert np.abs(got - A).max() < 0.3  # i4 keyed back: its a is positive, as simulated
    assert all(np.all(np.diff(i["thresholds"]) > 0) for i in irt["items"])
    assert irt["information"]["theta"] == list(THETA) and len(irt["information"]["test"]) == 33
    text = psym("analyze", "--task", "grm6", "--responses", str(path), "--irt").output
    line = next(x for x in text.splitlines() if "IRT (graded) S" in x)
    assert "6 items, n 1500 of 1500 (listwise), a " in line and "information peaks at" in line
    plain = psym("analyze", "--task", "grm6", "--responses", str(path), "--json")
    assert "irt" not in json.loads(plain.output)["population"]["all"]  # only when asked


def test_population_run_with_irt_names_the_items_against_the_scale(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The shared 32-persona run (``tests/binary_population.py``): '5' to every item for an
    extroverted persona, '1' otherwise (acquiescence: the reverse-keyed items, keyed back, run
    against the others)."""
    run, _ = binary_bfi_run(tmp_path_factory)
    # one analysis, printed as text and written as analysis.json (the report --json prints)
    out = tmp_path / "analysis"
    res = CliRunner().invoke(cli, ["analyze", str(run), "--irt", "-o", str(out)])
    assert res.exit_code == 0, res.output
    irt = json.loads((out / "analysis.json").read_text())["sections"]["population"]["bfi"]["irt"]
    assert set(irt) == {
        "extraversion",
        "agreeableness",
        "conscientiousness",
        "neuroticism",
        "openness",
    }
    ext = irt["extraversion"]
    assert ext["n"] == 32 and ext["items"] == [] and ext["information"] is None
    # the same answer to every item: the reverse-keyed items (6, 21, 31) run against the rest
    assert ext["reason"] == (
        "items negatively related to the rest of the scale (item-rest r < 0; a reverse key "
        "missing?): 6 (r -1.00), 21 (r -1.00), 31 (r -1.00)"
    )
    assert "IRT (graded) extraversion: undefined (items negatively related" in res.output
