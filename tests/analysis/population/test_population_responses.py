"""``psym analyze --task T --responses FILE`` with a respondent column: the population analyses
(issue 25) next to the existing report — CFA loadings recovered from data simulated with known
loadings, persona-clustered intervals, criterion validity against a label column, and the
reason naming an item that never varies.

References: the simulating one-factor model itself (its standardized loadings, which the ML
estimates converge to; tolerance ~3 standard errors at n = 1,500) and hand arithmetic.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import cli
from psymetrics_core.pluginsys.session import Session

SPEC = """\
schema_version: 1
id: onefac
name: One-factor test scale
version: "1"
citation: none (simulated for the test)
license: {status: test}
item_source: test
forms: {original: items.csv}
response_scales:
  default: {min: 0, max: 60, labels: [LABELS]}
scales:
  a: {method: mean}
prompt: {instruction: Answer.}
""".replace("LABELS", ", ".join(f"v{i}" for i in range(61)))
ITEMS = "id,text,scale,reverse\n1,one,a,0\n2,two,a,1\n3,three,a,0\n4,four,a,0\n5,five,a,0\n"
LOADINGS = np.array([0.8, 0.7, 0.6, 0.5, 0.4])


@pytest.fixture
def instrument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "instruments" / "onefac"
    root.mkdir(parents=True)
    (root / "instrument.yaml").write_text(SPEC)
    (root / "items.csv").write_text(ITEMS)
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(tmp_path / "instruments"))
    return tmp_path


@pytest.fixture
def psym(instrument: Path):
    """``psym ARGS`` with a session of the installed plugins and the test's instrument (a
    session made after PSYM_INSTRUMENTS_PATH is set)."""
    session = Session()
    return lambda *args: CliRunner().invoke(cli, list(args), obj=session)


def _long(path: Path, n: int = 1500, personas: int = 60, seed: int = 4) -> Path:
    """Answers from x = lambda f + e (var 1) on a near-continuous 0..60 scale (30 + 8x,
    rounded: the rounding adds 1/768 to each variance); item 2 is reverse-keyed, so its raw
    answers run the other way. Every respondent is a prompt variant of one of ``personas``
    personas and carries the persona's factor score as the label ``trait``."""
    rng = np.random.default_rng(seed)
    persona = np.arange(n) % personas
    trait = rng.standard_normal(personas)
    f = 0.7 * trait[persona] + np.sqrt(0.51) * rng.standard_normal(n)
    x = f[:, None] * LOADINGS + rng.standard_normal((n, 5)) * np.sqrt(1 - LOADINGS**2)
    x[:, 1] = -x[:, 1]
    raw = np.clip(np.rint(30 + 8 * x), 0, 60).astype(int)
    pd.DataFrame(
        {
            "respondent": np.repeat([f"r{i}" for i in range(n)], 5),
            "persona": np.repeat([f"p{p}" for p in persona], 5),
            "trait": np.repeat(np.round(trait[persona], 4), 5),
            "item": np.tile([1, 2, 3, 4, 5], n),
            "response": raw.reshape(-1),
        }
    ).to_csv(path, index=False)
    return path


def _analyze(psym, *args: str) -> dict:
    res = psym("analyze", "--task", "onefac", *args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_cfa_recovers_the_simulated_loadings_next_to_the_old_report(instrument: Path, psym) -> None:
    rep = _analyze(psym, "--responses", str(_long(instrument / "long.csv")))
    assert rep["groups"]["all"]["scales"]["a"]["alpha"]["alpha"] > 0.6  # the existing report
    pop = rep["population"]["all"]
    assert rep["cluster"] == "persona" and pop["n_clusters"] == 60
    assert pop["n_respondents"] == 1500 and pop["cells_answered"] == 1.0
    assert "parse_rate" not in pop and pop["source"] == "responses" and rep["missing"] == "listwise"
    cfa = pop["cfa"]["a"]
    assert cfa["reason"] is None and cfa["fit"]["df"] == 5
    std = {x["item"]: x["std"] for x in cfa["loadings"]}
    # item 2 keyed back by the reverse key: all five loadings positive, as simulated
    assert [std[i] for i in "12345"] == pytest.approx(LOADINGS.tolist(), abs=0.06)
    assert cfa["fit"]["cfi"] > 0.98  # the true model
    rel = {c["name"]: c for c in pop["reliability"][0]["coefficients"]}
    # omega of the true loadings: (sum lambda)^2 / ((sum lambda)^2 + sum(1 - lambda^2))
    true_omega = 3.0**2 / (3.0**2 + float(np.sum(1 - LOADINGS**2)))
    assert rel["omega_total"]["value"] == pytest.approx(true_omega, abs=0.03)
    naive, clustered = rel["alpha"]["naive_ci95"], rel["alpha"]["cluster_ci95"]
    assert clustered[1] - clustered[0] > naive[1] - naive[0]  # 60 personas, not 1,500 people


def test_criterion_against_a_label_column(instrument: Path, psym) -> None:
    rep = _analyze(
        psym, "--responses", str(_long(instrument / "long.csv")), "--criterion", "a=trait"
    )
    (crit,) = rep["population"]["all"]["criterion"]
    # the scale score tracks the persona trait: f = .7 trait + noise; rho well above .4
    assert crit["statistic"] == "rho" and crit["label"] == "trait" and crit["value"] > 0.4
    res = psym(
        "analyze",
        "--task",
        "onefac",
        "--responses",
        str(instrument / "long.csv"),
        "--criterion",
        "a=age",
    )
    assert isinstance(res.exception, PsymError)  # printed as one line by ``psym``
    assert str(res.exception) == "--criterion a=age: the respondents have no label 'age'"


def test_a_constant_item_is_named_and_no_numbers_come_from_it(instrument: Path, psym) -> None:
    path = _long(instrument / "long.csv", n=200, personas=200)
    frame = pd.read_csv(path)
    frame.loc[frame["item"] == 3, "response"] = 30
    frame.drop(columns=["persona"]).to_csv(path, index=False)
    pop = _analyze(psym, "--responses", str(path))["population"]["all"]
    assert pop["constant_items"] == ["3"]
    assert pop["reliability"][0]["reason"] == "items that never vary: 3"
    assert pop["cfa"]["a"]["fit"] is None and pop["cfa"]["a"]["reason"] == (
        "items that never vary: 3"
    )
    assert pop["n_clusters"] == 200  # no persona column: each respondent is its own


def test_cluster_column_must_exist_and_name_one_persona(instrument: Path, psym) -> None:
    path = _long(instrument / "long.csv", n=100, personas=10)
    res = psym("analyze", "--task", "onefac", "--responses", str(path), "--cluster", "model")
    assert isinstance(res.exception, PsymError)
    assert str(res.exception) == f"--cluster model: {path} has no column 'model'"
    frame = pd.read_csv(path)
    frame.loc[0, "persona"] = "other"  # r0 now has two personas
    frame.to_csv(path, index=False)
    res = psym("analyze", "--task", "onefac", "--responses", str(path))
    assert isinstance(res.exception, PsymError)
    assert str(res.exception).startswith(
        "--cluster persona: respondent 'r0' has more than one 'persona' value"
    )


def test_groups_reuse_respondent_ids_with_their_own_personas(instrument: Path, psym) -> None:
    """Respondent ids need only be unique within a group: r0 of model m1 and r0 of model m2
    are different people, with different personas."""
    one = pd.read_csv(_long(instrument / "long.csv", n=300, personas=30))
    two = one.assign(persona="q" + one["persona"], model="m2")
    path = instrument / "grouped.csv"
    pd.concat([one.assign(model="m1"), two]).to_csv(path, index=False)
    rep = _analyze(psym, "--responses", str(path), "--group", "model")
    assert set(rep["population"]) == {"m1", "m2"}
    for g in ("m1", "m2"):
        assert rep["population"][g]["n_respondents"] == 300
        assert rep["population"][g]["n_clusters"] == 30


def test_human_data_speak_of_respondents_and_cells_answered(instrument: Path, psym) -> None:
    """A response file is people, not a model run (issue 31, item 6): its entry counts
    respondents (and the clusters of its persona column) and the cells answered, never a
    parse rate or personas; every analysis line states its rows."""
    path = _long(instrument / "long.csv")
    res = psym("analyze", "--task", "onefac", "--responses", str(path))
    assert res.exit_code == 0, res.output
    head = next(x for x in res.output.splitlines() if x.startswith("onefac: "))
    assert head.startswith("onefac: 1500 respondents (60 clusters), cells answered 1.00")
    assert "parse rate" not in res.output and "personas)" not in res.output
    assert "  missing answers: listwise (" in res.output
    assert "n 1500 of 1500 (listwise)" in res.output


def test_criterion_keeps_every_pair_of_one_scale(instrument: Path, psym) -> None:
    """``--criterion a=trait --criterion a=flip`` gives both rows (issue 31: a dict per scale
    kept only the last); a pair given twice is one row. flip = -trait: rho changes sign."""
    path = _long(instrument / "long.csv", n=300, personas=300)
    frame = pd.read_csv(path)
    frame.assign(flip=-frame["trait"]).to_csv(path, index=False)
    rep = _analyze(
        psym,
        "--responses",
        str(path),
        "--criterion",
        "a=trait",
        "--criterion",
        "a=flip",
        "--criterion",
        "a=trait",
    )
    rows = rep["population"]["all"]["criterion"]
    assert [(r["scale"], r["label"]) for r in rows] == [("a", "trait"), ("a", "flip")]
    assert rows[0]["value"] == pytest.approx(-rows[1]["value"]) and rows[0]["value"] > 0.4


def test_missing_policy_on_a_response_file(instrument: Path, psym) -> None:
    """``--missing`` reaches every analysis of a response file and is recorded; the old
    ``--deletion`` is read as it with a warning; both, differing, is one error; fiml refuses
    the EFA in one line naming it. 60 of the 300 respondents skip item 4."""
    path = _long(instrument / "long.csv", n=300, personas=300)
    frame = pd.read_csv(path)
    skip = frame["item"].eq(4) & frame["respondent"].isin([f"r{i}" for i in range(60)])
    frame.loc[skip, "response"] = np.nan
    frame.to_csv(path, index=False)
    lw = _analyze(psym, "--responses", str(path), "--efa", "1")
    pw = _analyze(psym, "--responses", str(path), "--efa", "1", "--missing", "pairwise")
    assert (lw["missing"], pw["missing"]) == ("listwise", "pairwise")
    a, b = lw["population"]["all"], pw["population"]["all"]
    assert a["missing"] == "listwise" and b["missing"] == "pairwise"
    assert a["cfa"]["a"]["rows"]["n"] == 240 and b["cfa"]["a"]["rows"]["n"] == 240
    assert b["cfa"]["a"]["rows"]["n_pairs_max"] == 300
    assert a["cfa"]["a"]["fit"]["chisq"] != b["cfa"]["a"]["fit"]["chisq"]
    assert a["parallel_analysis"]["n"] == 240 and a["efa"]["rows"]["n"] == 240
    assert "60 rows with an unanswered item left out" in a["reliability"][0]["rows"]["dropped"]
    old = psym(
        "analyze", "--task", "onefac", "--responses", str(path), "--deletion", "pairwise", "--json"
    )
    assert old.exit_code == 0 and "--deletion is now --missing" in old.stderr
    assert json.loads(old.stdout)["population"]["all"]["missing"] == "pairwise"
    both = psym(
        "analyze",
        "--task",
        "onefac",
        "--responses",
        str(path),
        "--deletion",
        "pairwise",
        "--missing",
        "listwise",
    )
    assert isinstance(both.exception, PsymError)
    assert "--deletion is the old name of --missing" in str(both.exception)
    fiml = psym(
        "analyze", "--task", "onefac", "--responses", str(path), "--missing", "fiml", "--efa", "1"
    )
    assert fiml.exit_code == 0, fiml.output
    assert "--missing fiml: the EFA has no full-information estimator here" in fiml.stdout
    assert "CFA a: chi2 " in fiml.stdout and "n 300 of 300 (fiml)" in fiml.stdout
