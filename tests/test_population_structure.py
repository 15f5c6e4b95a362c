"""Structural analyses in ``psym analyze`` (issue 25, item 3): measurement invariance across
``--group`` (population runs and ``--responses``, LLM vs human with ``--human``), parallel
analysis and ``--efa``, and a CFA model in lavaan syntax (``--cfa-model FILE``).

References:
- semTools ``measurementInvariance(model = HS.model, data = HolzingerSwineford1939,
  group = "school")`` as printed in M. Clark (2019), "Comparisons of the Unseen": configural
  chi-square 115.85 (df 48), loadings 124.04 (54), intercepts 164.10 (60); CFI .923 .921 .882
  (the values checked on the engine in tests/test_population_stats.py).
- lavaan's CFA tutorial, ``cfa(HS.model, data = HolzingerSwineford1939)``: chi-square 85.306,
  df 24, CFI .931, Std.all loadings .772 .424 .581 .852 .855 .838 .570 .723 .665.
- Maximum-likelihood chi-square and standardized loadings do not change when an item is
  multiplied by a constant: the H&S scores, each an integer multiple of 1/k_j (k_j = 6, 4, 8,
  3, 4, 7, 23, 20, 36), are written as the integer codes x_j * k_j so that a questionnaire
  (integer answers) can carry them.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.latency_server import LatencyServer  # noqa: E402

HS_ITEMS = [f"x{i}" for i in range(1, 10)]
HS_SCALE = [6, 4, 8, 3, 4, 7, 23, 20, 36]
HS_MODEL = "visual =~ x1 + x2 + x3\ntextual =~ x4 + x5 + x6\nspeed =~ x7 + x8 + x9\n"
LAVAAN_STD = [0.772, 0.424, 0.581, 0.852, 0.855, 0.838, 0.570, 0.723, 0.665]
SEMTOOLS_CHISQ = [115.851, 124.044, 164.103]

SPEC = """\
schema_version: 1
id: hs
name: Holzinger & Swineford (1939) ability tests as a questionnaire
version: "1"
citation: Holzinger & Swineford (1939), lavaan's HolzingerSwineford1939
license: {status: test}
item_source: test
forms: {original: items.csv}
response_scales:
  default: {min: 0, max: 333, labels: [LABELS]}
scales:
  visual: {method: mean}
  textual: {method: mean}
  speed: {method: mean}
prompt: {instruction: Answer.}
""".replace("LABELS", ", ".join(f"v{i}" for i in range(334)))
ITEMS = "id,text,scale,reverse\n" + "".join(
    f"x{i},test {i},{s},0\n"
    for i, s in zip(range(1, 10), ["visual"] * 3 + ["textual"] * 3 + ["speed"] * 3, strict=True)
)


@pytest.fixture(scope="module")
def hs() -> pd.DataFrame:
    from semopy.examples import holzinger39

    return holzinger39.get_data()


@pytest.fixture
def psym(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``psym ARGS`` with the test's H&S instrument on the instrument path."""
    root = tmp_path / "instruments" / "hs"
    root.mkdir(parents=True)
    (root / "instrument.yaml").write_text(SPEC)
    (root / "items.csv").write_text(ITEMS)
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(tmp_path / "instruments"))
    session = Session()
    return lambda *args: CliRunner().invoke(cli, list(args), obj=session)


def hs_long(hs: pd.DataFrame, path: Path, rows: pd.Index | None = None) -> Path:
    """The H&S data as a long file of integer codes (respondent, school, item, response)."""
    d = hs if rows is None else hs.loc[rows]
    codes = np.rint(d[HS_ITEMS].to_numpy() * np.array(HS_SCALE)).astype(int)
    assert np.allclose(codes / np.array(HS_SCALE), d[HS_ITEMS].to_numpy(), atol=1e-5)
    pd.DataFrame({
        "respondent": np.repeat([f"s{i}" for i in d.index], 9),
        "school": np.repeat(d["school"].to_numpy(), 9),
        "item": np.tile(HS_ITEMS, len(d)),
        "response": codes.reshape(-1),
    }).to_csv(path, index=False)  # fmt: skip
    return path


def _json(res) -> dict:
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_invariance_ladder_by_school_through_the_cli(hs, psym, tmp_path: Path) -> None:
    path = hs_long(hs, tmp_path / "hs.csv")
    rep = _json(psym("analyze", "--task", "hs", "--responses", str(path), "--group", "school",
                     "--json"))  # fmt: skip
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
    text = psym("analyze", "--task", "hs", "--responses", str(path), "--group", "school")
    assert text.exit_code == 0, text.output
    assert "invariance by school (Pasteur 156, Grant-White 145)" in text.output
    assert "scalar       164.10   60  0.882" in text.output and "rejected (CFI)" in text.output


def test_llm_vs_human_is_the_ladder_by_source(hs, psym, tmp_path: Path) -> None:
    """Pasteur as the "LLM" file and Grant-White as the human file: the school ladder again."""
    llm = hs_long(hs, tmp_path / "llm.csv", hs.index[hs["school"] == "Pasteur"])
    human = hs_long(hs, tmp_path / "human.csv", hs.index[hs["school"] == "Grant-White"])
    rep = _json(psym("analyze", "--task", "hs", "--responses", str(llm), "--human", str(human),
                     "--json"))  # fmt: skip
    inv = rep["invariance"]
    assert inv["group"] == "source" and inv["groups"] == {"llm": 156, "human": 145}
    assert [s["fit"]["chisq"] for s in inv["steps"]] == pytest.approx(SEMTOOLS_CHISQ, abs=2e-3)
    assert set(rep["groups"]) == {"llm", "human"} and rep["group_by"] == "source"
    res = psym("analyze", "--task", "hs", "--responses", str(llm), "--human", str(human),
               "--group", "school")  # fmt: skip
    assert isinstance(res.exception, PsymError) and "not with --group school" in str(res.exception)


def test_cfa_model_file_reproduces_lavaans_tutorial(hs, psym, tmp_path: Path) -> None:
    model = tmp_path / "hs.lav"
    model.write_text("# lavaan's HS.model\n" + HS_MODEL)
    path = hs_long(hs, tmp_path / "hs.csv")
    rep = _json(psym("analyze", "--task", "hs", "--responses", str(path), "--cfa-model",
                     str(model), "--json"))  # fmt: skip
    c = rep["population"]["all"]["cfa_model"]
    assert c["reason"] is None and c["n"] == 301
    assert c["fit"]["chisq"] == pytest.approx(85.306, abs=1e-3) and c["fit"]["df"] == 24
    assert c["fit"]["cfi"] == pytest.approx(0.931, abs=1e-3)
    assert [x["std"] for x in c["loadings"]] == pytest.approx(LAVAAN_STD, abs=2e-3)
    assert c["model"].splitlines()[0] == "visual =~ x1 + x2 + x3"


def test_parallel_analysis_and_efa_find_the_three_factors(hs, psym, tmp_path: Path) -> None:
    """Parallel analysis retains 3 factors on H&S (psych's fa.parallel reports 3 factors for
    these nine tests); the oblimin EFA puts each test's largest loading on its own factor."""
    path = hs_long(hs, tmp_path / "hs.csv")
    rep = _json(psym("analyze", "--task", "hs", "--responses", str(path), "--efa", "auto",
                     "--json"))  # fmt: skip
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
    few = hs.index[hs["school"] == "Pasteur"].append(hs.index[hs["school"] == "Grant-White"][:3])
    path = hs_long(hs, tmp_path / "few.csv", few)
    inv = _json(psym("analyze", "--task", "hs", "--responses", str(path), "--group", "school",
                     "--json"))["invariance"]  # fmt: skip
    assert inv["steps"] == [] and inv["reason"] == (
        "groups too small (need 19+ complete respondents): Grant-White (3)"
    )
    const = hs.copy()
    const.loc[const["school"] == "Pasteur", "x3"] = 1.0
    path = hs_long(const, tmp_path / "const.csv")
    res = psym("analyze", "--task", "hs", "--responses", str(path), "--group", "school")
    assert res.exit_code == 0, res.output
    assert "undefined (items that never vary in group Pasteur: x3)" in res.output


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("visual =~ x1 + x2 + x3\ntextual <- x4 + x5\n",
         "line 2: expected 'factor =~ item + item' or 'a ~~ b', got 'textual <- x4 + x5'"),
        ("visual =~ x1 + x2 + x10\n",
         "line 1: 'x10' is not a factor of the model or an item of task hs (items: x1, x2"),
        ("# nothing\n", "no 'factor =~ item + item' line"),
        ("visual =~ x1 + x2 + x3\nvisual ~~ speed\n",
         "line 2: 'speed' is not a factor of the model or an item of task hs"),
    ],
)  # fmt: skip
def test_bad_cfa_model_is_one_line_naming_file_and_line(
    hs, psym, tmp_path: Path, text: str, expect: str
) -> None:
    model = tmp_path / "m.lav"
    model.write_text(text)
    path = hs_long(hs, tmp_path / "hs.csv", hs.index[:40])
    res = psym("analyze", "--task", "hs", "--responses", str(path), "--cfa-model", str(model))
    assert isinstance(res.exception, PsymError), res.output
    assert str(res.exception).startswith(f"--cfa-model {model}")
    assert expect in str(res.exception)


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
        res = CliRunner().invoke(cli, [
            "eval", "--tasks", "bfi", "--population", str(pop), "--sample", "60", "--limit",
            "16", "--model", "openai-chat", "--model-args",
            f"base_url={srv.base_url},model={name}", "-o", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    return out


def test_group_on_population_runs(tmp_path: Path) -> None:
    pop = tmp_path / "big5.jsonl"
    res = CliRunner().invoke(cli, ["population", "build", "--generate", "trait-markers",
                                   "--levels", "1,5,9", "-o", str(pop)])  # fmt: skip
    assert res.exit_code == 0, res.output
    runs = [str(_run(tmp_path, pop, m)) for m in ("m1", "m2")]
    rep = _json(CliRunner().invoke(cli, ["analyze", *runs, "--group", "model", "--json"]))
    inv = rep["sections"]["population"]["bfi"]["invariance"]
    # the first 16 items (five scales) of 60 personas: the runs' model labels are the groups
    assert inv["group"] == "model" and inv["groups"] == {"m1": 60, "m2": 60}
    assert inv["reason"] is None and [s["level"] for s in inv["steps"]] == [
        "configural", "metric", "scalar"]  # fmt: skip
    # the report takes the same options: the ladder and the EFA appear in the HTML
    html_path = tmp_path / "r.html"
    res = CliRunner().invoke(cli, ["report", *runs, "--group", "model", "--efa", "auto", "-o",
                                   str(html_path)])  # fmt: skip
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
