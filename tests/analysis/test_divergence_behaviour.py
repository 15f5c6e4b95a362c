"""A behaviour task mapped to a construct (issue 33, item 4): the moral foundations measured by
self-report (MFQ-30, ``psym import answers``) and by behaviour (``moral-advice``: the share of
foundation-aligned advice on dilemmas, a scripted advisor and judge), compared by
``psym analyze``'s divergence section. The profiles are checked by hand (MFQ means of constant
answers; shares of the scripted verdicts) and rho and its exact permutation p against scipy
(``scipy.stats.spearmanr``; ``scipy.stats.permutation_test`` over all 120 pairings).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from behaviour_fakes import ScriptedBackend
from click.testing import CliRunner
from scipy import stats

from psymetrics_core import evaluate
from psymetrics_core.analysis.divergence import divergence
from psymetrics_core.analysis.divergence_section import render
from psymetrics_core.cli import cli

MODEL = "m"
FOUNDATIONS = ("care", "fairness", "loyalty", "authority", "purity")
# the MFQ-30 answer given to every item of a foundation (0-5): the self-report profile
MFQ = {"care": 5, "fairness": 4, "loyalty": 1, "authority": 2, "purity": 3}
# per foundation, the advice the judge codes as taking the action (4 dilemmas each, all
# pro-foundation): the behaviour profile is the share aligned
TAKES = {"care": 3, "fairness": 4, "loyalty": 1, "authority": 0, "purity": 2}


def _mfq_run(tmp: Path) -> Path:
    items = tmp / "mfq.csv"
    key = Path(__file__).parents[2] / "plugins" / "psymetrics-plugin-mfq"
    rows = list(csv.DictReader((key / "psymetrics_plugin_mfq/instruments/mfq/items.csv").open()))
    with items.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["respondent", "item", "response"])
        for r in rows:  # the catch items (no foundation) get a 0
            w.writerow(["r1", r["id"], MFQ.get(r["scale"], 0)])
    out = tmp / "mfq-run"
    argv = ["import", "answers", str(items), "--task", "mfq", "--model", MODEL, "-o", str(out)]
    res = CliRunner().invoke(cli, argv)
    assert res.exit_code == 0, res.output
    return out


def _advice_run(tmp: Path) -> Path:
    data = tmp / "dilemmas.csv"
    with data.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "foundation", "dilemma", "action", "pro_foundation"])
        for f in FOUNDATIONS:
            for i in range(4):
                take = "TAKE" if i < TAKES[f] else "LEAVE"
                w.writerow([f"{f}-{i}", f, f"Dilemma {f} {i} ({take}): what now?", "act", "true"])

    def reply(text: str) -> str:
        if text.startswith("You are an expert judge"):
            option = "yes" if "(TAKE)" in text else "no"
            return json.dumps({"explanation": "coded", "option": option})
        return "Advice."

    out = tmp / "advice-run"
    evaluate(
        ["moral-advice"],
        backend=ScriptedBackend(reply),
        output=out,
        model=MODEL,
        task_options={"moral-advice": {"data": str(data)}},
    )
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("behaviour")
    return _mfq_run(tmp), _advice_run(tmp)


def test_both_methods_give_the_five_foundations(runs: tuple[Path, Path]) -> None:
    result = divergence(list(runs))
    profs = {p.key: p for p in result.profiles if p.family == "moral_foundations"}
    assert set(profs) == {"self-report:mfq", "behaviour:moral-advice"}
    assert profs["self-report:mfq"].scores == {f: float(v) for f, v in MFQ.items()}
    shares = profs["behaviour:moral-advice"].scores
    assert shares == {f: TAKES[f] / 4 for f in FOUNDATIONS}
    assert profs["behaviour:moral-advice"].n_units == dict.fromkeys(FOUNDATIONS, 4)
    assert profs["self-report:mfq"].n_units == dict.fromkeys(FOUNDATIONS, 6)


def test_rho_and_exact_p_equal_scipy(runs: tuple[Path, Path]) -> None:
    (pair,) = [p for p in divergence(list(runs)).pairs if p.family == "moral_foundations"]
    assert pair.kind == "cross-method" and pair.rho.n == 5
    x = [MFQ[f] for f in FOUNDATIONS]
    y = [TAKES[f] / 4 for f in FOUNDATIONS]
    assert pair.rho.rho == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)

    def rho(a: list[float]) -> float:
        return float(stats.spearmanr(a, y).statistic)

    exact = stats.permutation_test((x,), rho, permutation_type="pairings", n_resamples=float("inf"))
    assert pair.rho.p_method == "exact (120 orders)"
    assert pair.rho.p == pytest.approx(exact.pvalue, abs=1e-12)


def test_the_section_shows_the_table_and_the_units(runs: tuple[Path, Path]) -> None:
    text = render(divergence(list(runs)))
    assert f"{MODEL} · moral_foundations" in text
    assert "self-report:mfq vs behaviour:moral-advice (cross-method, n=5): rho 0.800" in text
    assert (
        "behaviour:moral-advice rests on n units per construct: "
        "care 4, fairness 4, loyalty 4, authority 4, purity 4"
    ) in text


def test_the_report_shows_the_same_units(runs: tuple[Path, Path], tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    res = CliRunner().invoke(cli, ["report", *map(str, runs), "-o", str(page)])
    assert res.exit_code == 0, res.output
    html = page.read_text(encoding="utf-8")
    assert "rests on n units per construct: care 4, fairness 4, loyalty 4" in html
