"""Structural analyses in ``psym analyze`` (issue 25, item 3): measurement invariance across
``--group`` (population runs and ``--responses``, LLM vs human with ``--human``), parallel
analysis and ``--efa``, and a CFA model in lavaan syntax (``--cfa-model FILE``) — on the
Holzinger & Swineford (1939) data read as your own survey (issue 31, item 7): lavaan's CSV as
it is, continuous scores, no ``--task`` and no instrument file.

References:
- semTools ``measurementInvariance(model = HS.model, data = HolzingerSwineford1939,
  group = "school")`` as printed in M. Clark (2019), "Comparisons of the Unseen": configural
  chi-square 115.85 (df 48), loadings 124.04 (54), intercepts 164.10 (60); CFI .923 .921 .882
  (the values checked on the engine in tests/analysis/population/test_population_stats.py).
- lavaan's CFA tutorial, ``cfa(HS.model, data = HolzingerSwineford1939)``: chi-square 85.306,
  df 24, CFI .931, TLI .896, RMSEA .092, SRMR .065, Std.all loadings .772 .424 .581 .852 .855
  .838 .570 .723 .665.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import cli
from psymetrics_core.pluginsys.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from benchmarks.latency_server import LatencyServer  # noqa: E402

HS_ITEMS = [f"x{i}" for i in range(1, 10)]
HS_MODEL = "visual =~ x1 + x2 + x3\ntextual =~ x4 + x5 + x6\nspeed =~ x7 + x8 + x9\n"
LAVAAN_STD = [0.772, 0.424, 0.581, 0.852, 0.855, 0.838, 0.570, 0.723, 0.665]
SEMTOOLS_CHISQ = [115.851, 124.044, 164.103]


@pytest.fixture(scope="module")
def hs() -> pd.DataFrame:
    from semopy.examples import holzinger39

    return holzinger39.get_data()


@pytest.fixture
def psym():
    """``psym ARGS`` in process (no instrument: the H&S file is your own survey)."""
    session = Session()
    return lambda *args: CliRunner().invoke(cli, list(args), obj=session)


def hs_wide(hs: pd.DataFrame, path: Path, rows: pd.Index | None = None) -> Path:
    """The H&S data as your own survey: lavaan's columns as they are (id, sex, ageyr, agemo,
    school, grade, x1-x9), one row per pupil, continuous scores."""
    (hs if rows is None else hs.loc[rows]).to_csv(path, index=False)
    return path


def hs_model(path: Path) -> Path:
    path.write_text("# lavaan's HS.model\n" + HS_MODEL)
    return path


def _json(res) -> dict:
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_the_survey_file_is_lavaans_data_unchanged(hs, tmp_path: Path) -> None:
    """No rescaling, no integer codes: the cells are lavaan's scores (first row and the sample
    means lavaan prints as intercepts, as in tests/analysis/population/test_population_stats.py)."""
    back = pd.read_csv(hs_wide(hs, tmp_path / "hs.csv"))
    assert back.loc[0, "x1"] == pytest.approx(3.333333) and back.loc[0, "x3"] == 0.375
    assert not np.allclose(back[HS_ITEMS], back[HS_ITEMS].round())  # continuous
    assert back[HS_ITEMS].mean().round(3).tolist() == [
        4.936,
        6.088,
        2.250,
        3.061,
        4.341,
        2.186,
        4.186,
        5.527,
        5.374,
    ]


def test_invariance_ladder_by_school_through_the_cli(hs, psym, tmp_path: Path) -> None:
    path, model = hs_wide(hs, tmp_path / "hs.csv"), hs_model(tmp_path / "hs.lav")
    argv = ["analyze", "--responses", str(path), "--cfa-model", str(model), "--group", "school"]
    rep = _json(psym(*argv, "--json"))
    assert rep["task"] is None and rep["survey"]["layout"] == "wide"
    assert rep["survey"]["items"] == HS_ITEMS
    assert rep["survey"]["scales"] == {
        "visual": HS_ITEMS[:3],
        "textual": HS_ITEMS[3:6],
        "speed": HS_ITEMS[6:],
    }
    inv = rep["invariance"]
    assert inv["group"] == "school" and inv["reason"] is None
    assert inv["groups"] == {"Pasteur": 156, "Grant-White": 145}
    steps = inv["steps"]
    assert [s["level"] for s in steps] == ["configural", "metric", "scalar"]
    assert [s["fit"]["chisq"] for s in steps] == pytest.approx(SEMTOOLS_CHISQ, abs=2e-3)
    assert [s["fit"]["df"] for s in steps] == [48, 54, 60]
    assert [round(s["fit"]["cfi"], 3) for s in steps] == [0.923, 0.921, 0.882]
    assert steps[1]["holds"] is True and steps[2]["holds"] is False
    assert "CFI drops" in steps[2]["decision"]
    assert set(rep["population"]) == {"Pasteur", "Grant-White"}  # per group, as before
    assert "invariance" not in rep["population"]["Pasteur"]
    text = psym(*argv)
    assert text.exit_code == 0, text.output
    assert "hs.csv: your own survey (wide), 9 items; scales visual: x1, x2, x3;" in text.output
    assert "invariance by school (Pasteur 156, Grant-White 145)" in text.output
    assert "scalar       164.10   60  0.882" in text.output and "rejected (CFI)" in text.output


def test_llm_vs_human_is_the_ladder_by_source(hs, psym, tmp_path: Path) -> None:
    """Pasteur as the "LLM" file and Grant-White as the human file: the school ladder again."""
    llm = hs_wide(hs, tmp_path / "llm.csv", hs.index[hs["school"] == "Pasteur"])
    human = hs_wide(hs, tmp_path / "human.csv", hs.index[hs["school"] == "Grant-White"])
    model = hs_model(tmp_path / "hs.lav")
    argv = ["analyze", "--responses", str(llm), "--human", str(human), "--cfa-model", str(model)]
    rep = _json(psym(*argv, "--json"))
    inv = rep["invariance"]
    assert inv["group"] == "source" and inv["groups"] == {"llm": 156, "human": 145}
    assert [s["fit"]["chisq"] for s in inv["steps"]] == pytest.approx(SEMTOOLS_CHISQ, abs=2e-3)
    assert set(rep["groups"]) == {"llm", "human"} and rep["group_by"] == "source"
    res = psym(*argv, "--group", "school")
    assert isinstance(res.exception, PsymError) and "not with --group school" in str(res.exception)
    human.write_text(human.read_text().replace(",x9\n", ",x10\n", 1))  # lost one item column
    res = psym(*argv)
    assert isinstance(res.exception, PsymError)
    assert str(res.exception) == (
        f"{human}: no item column 'x9' (expected the items of "
        "--responses: x1, x2, x3, x4, x5, x6, x7, x8, x9)"
    )


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_cfa_model_file_reproduces_lavaans_tutorial(hs, psym, tmp_path: Path, layout) -> None:
    path, model = hs_wide(hs, tmp_path / "hs.csv"), hs_model(tmp_path / "hs.lav")
    if layout == "long":  # respondent,item,response with the same continuous scores
        long = hs.melt(
            id_vars=["id", "school"], value_vars=HS_ITEMS, var_name="item", value_name="response"
        ).rename(columns={"id": "respondent"})
        long.to_csv(path, index=False)
    rep = _json(psym("analyze", "--responses", str(path), "--cfa-model", str(model), "--json"))
    assert rep["survey"]["layout"] == layout
    c = rep["population"]["all"]["cfa_model"]
    assert c["reason"] is None and c["n"] == 301
    assert c["fit"]["chisq"] == pytest.approx(85.306, abs=1e-3) and c["fit"]["df"] == 24
    assert c["fit"]["cfi"] == pytest.approx(0.931, abs=1e-3)
    assert c["fit"]["tli"] == pytest.approx(0.896, abs=1e-3)
    assert c["fit"]["rmsea"] == pytest.approx(0.092, abs=1e-3)
    assert c["fit"]["srmr"] == pytest.approx(0.065, abs=1e-3)
    assert [x["std"] for x in c["loadings"]] == pytest.approx(LAVAAN_STD, abs=2e-3)
    assert c["model"].splitlines()[0] == "visual =~ x1 + x2 + x3"


def test_parallel_analysis_and_efa_find_the_three_factors(hs, psym, tmp_path: Path) -> None:
    """Parallel analysis retains 3 factors on H&S (psych's fa.parallel reports 3 factors for
    these nine tests); the oblimin EFA puts each test's largest loading on its own factor.
    Without a model every column but ``respondent`` is an item (one scale, ``all``)."""
    path = tmp_path / "hs.csv"
    hs[["id", *HS_ITEMS]].rename(columns={"id": "respondent"}).to_csv(path, index=False)
    rep = _json(psym("analyze", "--responses", str(path), "--efa", "auto", "--json"))
    assert rep["survey"]["scales"] == {"all": HS_ITEMS}
    pop = rep["population"]["all"]
    assert pop["parallel_analysis"]["n_factors"] == 3
    e = pop["efa"]
    assert e["n_factors"] == 3 and e["rotation"] == "oblimin" and e["reason"] is None
    top = {i: int(np.argmax(np.abs(v))) for i, v in e["loadings"].items()}
    groups = [{top[i] for i in HS_ITEMS[k : k + 3]} for k in (0, 3, 6)]
    assert all(len(g) == 1 for g in groups) and len(set.union(*groups)) == 3
    assert e["congruence"] is None
    assert e["congruence_reason"] == "the instrument ships no human loadings"
    assert len(e["factor_corr"]) == 3


def test_degenerate_groups_give_the_reason(hs, psym, tmp_path: Path) -> None:
    model = str(hs_model(tmp_path / "hs.lav"))
    few = hs.index[hs["school"] == "Pasteur"].append(hs.index[hs["school"] == "Grant-White"][:3])
    path = hs_wide(hs, tmp_path / "few.csv", few)
    inv = _json(
        psym(
            "analyze", "--responses", str(path), "--cfa-model", model, "--group", "school", "--json"
        )
    )["invariance"]
    assert inv["steps"] == [] and inv["reason"] == (
        "groups too small (need 19+ complete respondents): Grant-White (3)"
    )
    const = hs.copy()
    const.loc[const["school"] == "Pasteur", "x3"] = 1.0
    path = hs_wide(const, tmp_path / "const.csv")
    res = psym("analyze", "--responses", str(path), "--cfa-model", model, "--group", "school")
    assert res.exit_code == 0, res.output
    assert "undefined (items that never vary in group Pasteur: x3)" in res.output


def test_survey_descriptives_reliability_and_criterion_by_hand(hs, psym, tmp_path) -> None:
    """The survey's own numbers against independent computations: the scale score is the mean
    of the scale's items (pandas), alpha by its formula k/(k-1) (1 - sum var_i / var_total)
    (Cronbach 1951), Spearman's rho of the textual score with ``ageyr`` by scipy; the label
    columns of the wide file (id, sex, ageyr, agemo, school, grade) are the respondents' labels."""
    from scipy.stats import spearmanr

    path, model = hs_wide(hs, tmp_path / "hs.csv"), hs_model(tmp_path / "hs.lav")
    argv = ["analyze", "--responses", str(path), "--cfa-model", str(model)]
    rep = _json(psym(*argv, "--criterion", "textual=ageyr", "--json"))
    g = rep["groups"]["all"]
    assert g["n_respondents"] == 301
    for scale, items in (("visual", HS_ITEMS[:3]), ("textual", HS_ITEMS[3:6])):
        x = hs[items]
        d = g["scales"][scale]["descriptives"]
        assert d["n"] == 301 and d["mean"] == pytest.approx(x.mean(axis=1).mean(), abs=1e-9)
        assert d["sd"] == pytest.approx(x.mean(axis=1).std(ddof=1), abs=1e-9)
        alpha = 3 / 2 * (1 - x.var(ddof=1).sum() / x.sum(axis=1).var(ddof=1))
        assert g["scales"][scale]["alpha"]["alpha"] == pytest.approx(alpha, abs=1e-9)
        assert g["scales"][scale]["items"]["x1" if scale == "visual" else "x4"]["mean"] == (
            pytest.approx(x.iloc[:, 0].mean(), abs=1e-9)
        )
    (row,) = rep["population"]["all"]["criterion"]
    assert row["scale"] == "textual" and row["label"] == "ageyr"
    rho = spearmanr(hs[HS_ITEMS[3:6]].mean(axis=1), hs["ageyr"], nan_policy="omit").statistic
    assert row["statistic"] == "rho" and row["value"] == pytest.approx(rho, abs=1e-9)
    pop = rep["population"]["all"]
    assert pop["acquiescence"] is None and "no instrument" in pop["acquiescence_reason"]
    assert {v["ratio"] for v in pop["variance_ratio"]} == {None}


def test_empty_and_na_cells_are_missing_answers(hs, psym, tmp_path: Path) -> None:
    """Five pupils lose one score each (three as R's NA, two as empty cells): the CFA model is
    fitted on the 296 complete rows, as lavaan's listwise default would."""
    text = hs_wide(hs, tmp_path / "hs.csv").read_text().splitlines()
    head = text[0].split(",")
    for row, col, cell in (
        (1, "x1", "NA"),
        (5, "x2", "NA"),
        (9, "x9", "NA"),
        (20, "x5", ""),
        (30, "x7", ""),
    ):
        cells = text[row].split(",")
        cells[head.index(col)] = cell
        text[row] = ",".join(cells)
    path = tmp_path / "hs.csv"
    path.write_text("\n".join(text) + "\n")
    model = hs_model(tmp_path / "hs.lav")
    rep = _json(psym("analyze", "--responses", str(path), "--cfa-model", str(model), "--json"))
    assert rep["population"]["all"]["cfa_model"]["n"] == 296
    assert rep["groups"]["all"]["scales"]["visual"]["items"]["x1"]["n"] == 300


def test_the_guide_shows_what_the_survey_prints(hs, psym, tmp_path, monkeypatch) -> None:
    """docs/guides/populations.md, "Your own survey data": each line of its text block (but
    ``...``) is a line ``psym analyze --responses hs.csv --cfa-model hs.lav`` prints."""
    page = (Path(__file__).resolve().parents[3] / "docs/guides/populations.md").read_text()
    section = page.split("\n### Your own survey data\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    hs_wide(hs, Path("hs.csv"))
    hs_model(Path("hs.lav"))
    res = psym("analyze", "--responses", "hs.csv", "--cfa-model", "hs.lav")
    assert res.exit_code == 0, res.output
    printed = {line.rstrip() for line in res.output.splitlines()}
    claimed = [line.rstrip() for line in block.splitlines() if line.strip() != "..."]
    assert len(claimed) >= 3 and [c for c in claimed if c not in printed] == []


def test_irt_refuses_continuous_answers(hs, psym, tmp_path: Path) -> None:
    path, model = hs_wide(hs, tmp_path / "hs.csv"), hs_model(tmp_path / "hs.lav")
    res = psym("analyze", "--responses", str(path), "--cfa-model", str(model), "--irt")
    assert isinstance(res.exception, PsymError)
    assert str(res.exception).startswith(
        f"--irt: {path}, line 2, column x1: 3.3333333 is not an integer category"
    )


COLUMNS = "id, sex, ageyr, agemo, grade, x1, x2, x3, x4, x5, x6, x7 ..."


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        (
            "visual =~ x1 + x2 + x3\ntextual <- x4 + x5\n",
            "line 2: expected 'factor =~ item + item' or 'a ~~ b', got 'textual <- x4 + x5'",
        ),
        (
            "visual =~ x1 + x2 + x10\n",
            "line 1: 'x10' is not a factor of the model or an item column of HS "
            f"(item columns: {COLUMNS})",
        ),
        ("# nothing\n", "no 'factor =~ item + item' line"),
        (
            "visual =~ x1 + x2 + x3\nvisual ~~ speed\n",
            "line 2: 'speed' is not a factor of the model or an item column of HS",
        ),
    ],
)
def test_bad_cfa_model_is_one_line_naming_file_and_line(
    hs, psym, tmp_path: Path, text: str, expect: str
) -> None:
    model = tmp_path / "m.lav"
    model.write_text(text)
    path = hs_wide(hs, tmp_path / "hs.csv", hs.index[:40])
    res = psym("analyze", "--responses", str(path), "--cfa-model", str(model), "--group", "school")
    assert isinstance(res.exception, PsymError), res.output
    assert str(res.exception).startswith(f"--cfa-model {model}")
    assert expect.replace("HS", str(path)) in str(res.exception)


def _answer(tag: str):
    """A loopback model: each persona has a level 0-2 per scale (from its text and the scale),
    and answers 1 + level + noise 0-2 (from the persona, item and ``tag``), reversed (6 - x)
    for the reverse-keyed items."""
    from psymetrics_core.pluginsys.session import Session as _S

    bfi = _S().get_instrument("bfi")
    scale_of = {it.text.lower(): it.scales[0] for it in bfi.forms["original"]}
    reverse = {it.text.lower() for it in bfi.forms["original"] if it.reverse}

    def h(text: str) -> int:
        return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)

    def answer(messages: list[dict[str, str]]) -> str:
        system = messages[0]["content"]
        user = messages[-1]["content"]
        stem = user.lower().split("statement: i see myself as someone who ")[-1].split("\n")[0]
        text = max((t for t in scale_of if stem.startswith(t.rstrip("."))), key=len, default="")
        assert text, stem
        x = 1 + h(system + scale_of.get(text, "")) % 3 + h(tag + system + user) % 3
        return str(6 - x if text in reverse else x)

    return answer


def _run(tmp_path: Path, pop: Path, name: str) -> Path:
    with LatencyServer(latency=0.0, answer=_answer(name)) as srv:
        out = tmp_path / name
        res = CliRunner().invoke(
            cli,
            [
                "eval",
                "--tasks",
                "bfi",
                "--population",
                str(pop),
                "--sample",
                "60",
                "--limit",
                "16",
                "--model",
                "openai-chat",
                "--model-args",
                f"base_url={srv.base_url},model={name}",
                "-o",
                str(out),
            ],
        )
    assert res.exit_code == 0, res.output
    return out


def test_group_on_population_runs(tmp_path: Path) -> None:
    pop = tmp_path / "big5.jsonl"
    res = CliRunner().invoke(
        cli,
        ["population", "build", "--generate", "trait-markers", "--levels", "1,5,9", "-o", str(pop)],
    )
    assert res.exit_code == 0, res.output
    runs = [str(_run(tmp_path, pop, m)) for m in ("m1", "m2")]
    rep = _json(CliRunner().invoke(cli, ["analyze", *runs, "--group", "model", "--json"]))
    inv = rep["sections"]["population"]["bfi"]["invariance"]
    # the first 16 items (five scales) of 60 personas: the runs' model labels are the groups
    assert inv["group"] == "model" and inv["groups"] == {"m1": 60, "m2": 60}
    assert inv["reason"] is None and [s["level"] for s in inv["steps"]] == [
        "configural",
        "metric",
        "scalar",
    ]
    # the report takes the same options: the ladder and the EFA appear in the HTML
    html_path = tmp_path / "r.html"
    res = CliRunner().invoke(
        cli, ["report", *runs, "--group", "model", "--efa", "auto", "-o", str(html_path)]
    )
    assert res.exit_code == 0, res.output
    html = html_path.read_text()
    ladder = html.split('<table class="pop-invariance">')[1].split("</table>")[0]
    for step in inv["steps"]:
        assert f"<td>{step['level']}</td>" in ladder and f"{step['fit']['chisq']:.2f}" in ladder
    assert "Measurement invariance by model" in html and '<table class="pop-efa">' in html
    one = _json(CliRunner().invoke(cli, ["analyze", runs[0], "--group", "openness", "--json"]))
    inv = one["sections"]["population"]["bfi"]["invariance"]
    assert inv["groups"] == {"5": 20, "1": 20, "9": 20}  # the trait-marker levels of openness
    assert inv["steps"] == [] and inv["reason"] == (
        "groups too small (need 33+ complete respondents): 5 (20), 1 (20), 9 (20)"
    )
    cond = _json(CliRunner().invoke(cli, ["analyze", runs[0], "--group", "condition", "--json"]))
    inv = cond["sections"]["population"]["bfi"]["invariance"]
    assert inv["groups"] == {"original": 60} and inv["reason"] == "needs 2+ groups, has 1"
    res = CliRunner().invoke(cli, ["analyze", runs[0], "--group", "region"])
    assert isinstance(res.exception, PsymError)
    assert str(res.exception).startswith("--group region: not model, condition or a respondent")


def test_an_efa_with_negative_df_is_not_identified(hs) -> None:
    """Nine items carry at most five factors: ((9 - 5)^2 - 14) / 2 = 1 df; six leave
    ((9 - 6)^2 - 15) / 2 = -3 (counted by hand), so no loadings, the reason instead."""
    from psymetrics_core.analysis.population.dimensionality import efa

    items = hs[[f"x{i}" for i in range(1, 10)]]
    assert efa(items, 5).reason is None
    res = efa(items, 6)
    assert res.loadings is None and res.reason is not None
    assert res.reason.startswith("not identified: 6 factors for 9 items leave df -3")
