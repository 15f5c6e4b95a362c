"""Published human loadings in an instrument spec (``human_loadings:``) and Tucker's congruence
of ``psym analyze --efa`` with them (issue 25, "Tucker's congruence with human loadings where
an instrument ships them").

No shipped instrument carries published loadings (none are in the seeds' paper notes), so the
tests use the Holzinger & Swineford (1939) data as a 9-item test instrument whose "human
loadings" are computed independently of psymetrics' EFA (statsmodels): scikit-learn's
``FactorAnalysis`` (maximum likelihood, varimax) on the standardized scores. The LLM data are
the same H&S scores, so phi is about 1; a permuted and reflected table still matches after
the factors are matched; a table for another structure gives phi below .85.

References:
- Tucker's phi = sum(x y) / sqrt(sum x^2 sum y^2) (Lorenzo-Seva & ten Berge 2006, eq. 1);
  their reading: >= .95 equal, .85-.94 fair similarity, below .85 not equal.
- The matching is checked against trying every permutation and sign (brute force).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from psymetrics_core.analysis.population.dimensionality import (
    congruence_reading,
    match_congruence,
)
from psymetrics_core.analysis.population.entry import Congruence, EFAEntry
from psymetrics_core.analysis.population.missing import RowsUsed
from psymetrics_core.cli import cli
from psymetrics_core.instruments.spec import load_instrument
from psymetrics_core.pluginsys.session import Session

HS_ITEMS = [f"x{i}" for i in range(1, 10)]
# Human loadings come with an instrument spec, so these tests keep H&S as a 9-item test
# instrument: each score is an integer multiple of 1/k_j (k_j below), written as the integer
# code x_j * k_j (ML loadings do not change when an item is multiplied by a constant). Your own
# survey needs none of this (test_population_structure.py reads the scores as they are).
HS_SCALE = [6, 4, 8, 3, 4, 7, 23, 20, 36]
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


def hs_long(hs: pd.DataFrame, path: Path, rows: pd.Index | None = None) -> Path:
    """The H&S data as a long file of integer codes (respondent, school, item, response)."""
    d = hs if rows is None else hs.loc[rows]
    codes = np.rint(d[HS_ITEMS].to_numpy() * np.array(HS_SCALE)).astype(int)
    assert np.allclose(codes / np.array(HS_SCALE), d[HS_ITEMS].to_numpy(), atol=1e-5)
    pd.DataFrame(
        {
            "respondent": np.repeat([f"s{i}" for i in d.index], 9),
            "school": np.repeat(d["school"].to_numpy(), 9),
            "item": np.tile(HS_ITEMS, len(d)),
            "response": codes.reshape(-1),
        }
    ).to_csv(path, index=False)
    return path


LOADINGS = (
    'human_loadings: {file: loadings.csv, source: "H&S by scikit-learn", n: 301, '
    "rotation: varimax, method: ml}\n"
)


@pytest.fixture(scope="module")
def hs() -> pd.DataFrame:
    from semopy.examples import holzinger39

    return holzinger39.get_data()


@pytest.fixture(scope="module")
def sk_loadings(hs: pd.DataFrame) -> pd.DataFrame:
    """ML varimax loadings of the nine H&S tests by scikit-learn (not statsmodels)."""
    from sklearn.decomposition import FactorAnalysis

    z = hs[HS_ITEMS]
    z = (z - z.mean()) / z.std(ddof=0)
    fa = FactorAnalysis(3, rotation="varimax", random_state=0).fit(z.to_numpy())
    lam = pd.DataFrame(fa.components_.T, index=HS_ITEMS)
    lam = lam * np.where(lam.sum() < 0, -1, 1)
    # named by the tests loading most on each factor (visual x1-3, textual x4-6, speed x7-9)
    top = [int(np.argmax(lam.loc[i].abs())) for i in HS_ITEMS]
    assert top[0:3] == [top[0]] * 3 and top[3:6] == [top[3]] * 3 and top[6:] == [top[6]] * 3
    lam = lam[[top[0], top[3], top[6]]]
    lam.columns = ["visual", "verbal", "speed"]
    return lam


def write_instrument(
    root: Path, table: pd.DataFrame | str | None, spec_extra: str = LOADINGS, items: str = ITEMS
) -> Path:
    """The H&S test instrument in ``root``/hs, with ``table`` as its loadings CSV."""
    d = root / "hs"
    d.mkdir(parents=True, exist_ok=True)
    (d / "instrument.yaml").write_text(SPEC + (spec_extra if table is not None else ""))
    (d / "items.csv").write_text(items)
    if isinstance(table, pd.DataFrame):
        table.rename_axis("item").round(4).to_csv(d / "loadings.csv")
    elif isinstance(table, str):
        (d / "loadings.csv").write_text(table)
    return d


def analyze(
    tmp_path: Path,
    monkeypatch,
    hs: pd.DataFrame,
    table,
    *args: str,
    items: str = ITEMS,
    rows: list[str] | None = None,
    text: bool = True,
) -> tuple[dict, str]:
    """``psym analyze --responses H&S --efa ...``: the EFA entry (JSON) and the text output
    (``text=False``: the JSON only, for a test that reads no text: one analysis, not two)."""
    write_instrument(tmp_path / "instruments", table, items=items)
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(tmp_path / "instruments"))
    path = hs_long(hs, tmp_path / "hs.csv")
    if rows is not None:  # only some items answered (as with --limit)
        long = pd.read_csv(path)
        long[long["item"].isin(rows)].to_csv(path, index=False)
    session = Session()
    argv = ["analyze", "--task", "hs", "--responses", str(path), *args]
    res = CliRunner().invoke(cli, [*argv, "--json"], obj=session)
    assert res.exit_code == 0, res.output
    efa = json.loads(res.output)["population"]["all"]["efa"]
    if not text:
        return efa, ""
    printed = CliRunner().invoke(cli, argv, obj=session)
    assert printed.exit_code == 0, printed.output
    return efa, printed.output


def _typed(e: dict) -> EFAEntry:
    """The typed EFA part (what the report reads) of the "efa" JSON ``e``."""
    cong = Congruence(
        **{
            k.removeprefix("congruence_") if k != "congruence" else "phi": v
            for k, v in e.items()
            if k.startswith("congruence")
        }
    )
    rest = {k: v for k, v in e.items() if not k.startswith("congruence") and k != "n"}
    r = rest.pop("rows")
    rows = None
    if r is not None:
        rows = RowsUsed(r["missing"], r["n"], r["of"], r["n_pairs_max"], r["dropped"])
    typed = EFAEntry(**rest, congruence=cong, rows=rows)
    assert typed.to_json() == e  # the same JSON both ways
    return typed


def test_same_data_gives_congruence_of_one(tmp_path, monkeypatch, hs, sk_loadings) -> None:
    e, text = analyze(tmp_path, monkeypatch, hs, sk_loadings, "--efa", "3", "--rotation", "varimax")
    assert e["reason"] is None and e["congruence_reason"] is None
    assert set(e["congruence"]) == {"visual", "verbal", "speed"}
    assert min(e["congruence"].values()) > 0.999
    assert e["congruence_source"] == "H&S by scikit-learn"
    assert e["congruence_items"] == 9 and e["congruence_note"] is None
    assert set(e["congruence_reading"].values()) == {"equal"}
    # each human factor is matched with the EFA factor carrying its three tests
    for fac, item in (("visual", "x1"), ("verbal", "x4"), ("speed", "x7")):
        j = e["factors"].index(e["congruence_match"][fac])
        big = [i for i, v in e["loadings"].items() if abs(v[j]) == max(map(abs, v))]
        assert item in big
    assert "Tucker's congruence with H&S by scikit-learn over 9 items" in text
    assert "(equal)" in text and "Lorenzo-Seva & ten Berge (2006)" in text
    # the report's EFA block: human factors with their matched EFA factor and the reading
    from psymetrics_core.report.population_sections import _efa

    rep = _efa(_typed(e))
    assert rep is not None and rep["congruence_source"] == "H&S by scikit-learn"
    assert [x["factor"].split(" ~ ")[0] for x in rep["congruence"]] == ["visual", "verbal", "speed"]
    assert {x["reading"] for x in rep["congruence"]} == {"equal"}
    assert {x["phi"]["text"] for x in rep["congruence"]} == {"1.000"}


def test_oblimin_efa_still_congruent_and_the_rotations_are_named(
    tmp_path, monkeypatch, hs, sk_loadings
) -> None:
    e, _ = analyze(tmp_path, monkeypatch, hs, sk_loadings, "--efa", "auto", text=False)
    assert e["n_factors"] == 3 and e["rotation"] == "oblimin"
    assert min(e["congruence"].values()) > 0.95
    assert e["congruence_note"] == "human loadings varimax-rotated, this EFA oblimin"


def test_permuted_and_reflected_table_still_matches(tmp_path, monkeypatch, hs, sk_loadings) -> None:
    table = sk_loadings[["speed", "visual", "verbal"]].copy()
    table["visual"] *= -1  # a published factor may be reflected
    e, _ = analyze(
        tmp_path, monkeypatch, hs, table, "--efa", "3", "--rotation", "varimax", text=False
    )
    assert list(e["congruence"]) == ["speed", "visual", "verbal"]
    assert min(e["congruence"].values()) > 0.999
    assert e["congruence_match"]["visual"].startswith("-")
    assert not e["congruence_match"]["speed"].startswith("-")


def test_another_structure_is_not_equal(tmp_path, monkeypatch, hs, sk_loadings) -> None:
    # the same values with the tests assigned across the three groups (x1, x4, x7 together...)
    order = ["x1", "x4", "x7", "x2", "x5", "x8", "x3", "x6", "x9"]
    table = pd.DataFrame(sk_loadings.to_numpy(), index=order, columns=sk_loadings.columns)
    e, text = analyze(tmp_path, monkeypatch, hs, table, "--efa", "3", "--rotation", "varimax")
    assert max(e["congruence"].values()) < 0.85
    assert set(e["congruence_reading"].values()) == {"not equal"}
    assert "(not equal)" in text


def test_reverse_keyed_items_are_flipped_to_the_keyed_direction(
    tmp_path, monkeypatch, hs, sk_loadings
) -> None:
    """x4 reverse-keyed: the EFA sees 333 - x4 (negative raw loading becomes positive); the
    table gives the raw direction (as published), x4's loading on the verbal factor positive.
    Without the flip, the verbal factor's phi falls well below .95."""
    items = ITEMS.replace("x4,test 4,textual,0", "x4,test 4,textual,1")
    e, _ = analyze(
        tmp_path,
        monkeypatch,
        hs,
        sk_loadings,
        "--efa",
        "3",
        "--rotation",
        "varimax",
        items=items,
        text=False,
    )
    assert min(e["congruence"].values()) > 0.999
    j = e["factors"].index(e["congruence_match"]["verbal"].lstrip("-"))
    assert e["loadings"]["x4"][j] * (-1 if e["congruence_match"]["verbal"][0] == "-" else 1) < 0


def test_fewer_efa_factors_leave_a_human_factor_unmatched(
    tmp_path, monkeypatch, hs, sk_loadings
) -> None:
    e, text = analyze(tmp_path, monkeypatch, hs, sk_loadings, "--efa", "2", "--rotation", "varimax")
    assert sum(v is None for v in e["congruence"].values()) == 1
    assert [k for k, v in e["congruence_match"].items() if v is None] == [
        k for k, v in e["congruence"].items() if v is None
    ]
    assert e["congruence_note"].startswith(
        "EFA has 2 factor(s), the human loadings 3: matched over 2"
    )
    assert "unmatched" in text and "note: EFA has 2 factor(s)" in text
    from psymetrics_core.report.population_sections import _efa

    rep = _efa(_typed(e))
    assert (
        rep is not None and [x["phi"]["title"] for x in rep["congruence"]].count("unmatched") == 1
    )
    assert rep["congruence_note"].startswith("EFA has 2 factor(s)")


def test_partial_item_overlap_is_named(tmp_path, monkeypatch, hs, sk_loadings) -> None:
    e, _ = analyze(
        tmp_path,
        monkeypatch,
        hs,
        sk_loadings,
        "--efa",
        "2",
        "--rotation",
        "varimax",
        rows=HS_ITEMS[:6],
        text=False,
    )
    assert e["congruence_items"] == 6
    assert (
        "3 item(s) of the human loadings are not in the data (x7, x8, x9)" in (e["congruence_note"])
    )
    assert min(v for v in e["congruence"].values() if v is not None) > 0.95
    # a table covering fewer items than the EFA: the others are left out, and said so
    table = sk_loadings.loc[HS_ITEMS[:6]]
    e, _ = analyze(tmp_path, monkeypatch, hs, table, "--efa", "3", text=False)
    assert e["congruence_items"] == 6
    assert "3 item(s) have no human loading and are left out (x7, x8, x9)" in e["congruence_note"]


def test_too_few_shared_items_give_the_reason(tmp_path, monkeypatch, hs, sk_loadings) -> None:
    table = sk_loadings.loc[["x1", "x2", "x7"]]
    e, text = analyze(tmp_path, monkeypatch, hs, table, "--efa", "2", rows=HS_ITEMS[:6])
    assert e["loadings"] is not None and e["congruence"] is None
    assert e["congruence_reason"] == (
        "2 of the 3 items of the human loadings are in the EFA (not in the data: x7); phi "
        "needs 3 or more"
    )
    assert e["congruence_source"] == "H&S by scikit-learn"
    assert "Tucker's congruence with H&S by scikit-learn: undefined (2 of the 3 items" in text
    e, _ = analyze(tmp_path, monkeypatch, hs, table.loc[["x1", "x2"]], "--efa", "2", text=False)
    assert e["congruence"] is None and e["congruence_reason"] == (
        "2 of the 2 items of the human loadings are in the EFA; phi needs 3 or more"
    )


def test_undefined_efa_gives_the_congruence_reason(tmp_path, monkeypatch, hs, sk_loadings) -> None:
    e, text = analyze(tmp_path, monkeypatch, hs, sk_loadings, "--efa", "9")
    assert e["loadings"] is None and e["congruence"] is None
    assert e["congruence_reason"] == f"the EFA is undefined ({e['reason']})"
    assert "EFA (ml, oblimin, 9 factor(s)): undefined (9 factors for 9 items)" in text


def test_show_and_validate_name_the_source(tmp_path, monkeypatch, sk_loadings) -> None:
    d = write_instrument(tmp_path / "instruments", sk_loadings)
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(tmp_path / "instruments"))
    session = Session()
    res = CliRunner().invoke(cli, ["validate", str(d)], obj=session)
    assert res.exit_code == 0, res.output
    assert "human loadings: H&S by scikit-learn: 3 factor(s) over 9 items" in " ".join(
        res.output.split()
    )
    res = CliRunner().invoke(cli, ["show", "hs"], obj=session)
    assert res.exit_code == 0, res.output
    assert "human loadings: H&S by scikit-learn" in " ".join(res.output.split())
    res = CliRunner().invoke(cli, ["show", "hs", "--json"], obj=session)
    h = json.loads(res.output)["human_loadings"]
    assert h["source"] == "H&S by scikit-learn" and h["direction"] == "raw"
    assert h["factors"] == ["visual", "verbal", "speed"] and h["n"] == 301
    assert h["loadings"]["x4"] == pytest.approx(list(sk_loadings.loc["x4"]), abs=1e-4)


def test_loadings_are_typed_on_the_instrument(tmp_path, sk_loadings) -> None:
    inst = load_instrument(write_instrument(tmp_path, sk_loadings))
    h = inst.human_loadings
    assert h is not None and h.factors == ("visual", "verbal", "speed")
    assert [i for i, _ in h.loadings] == HS_ITEMS
    assert (h.rotation, h.method, h.n) == ("varimax", "ml", 301)
    assert load_instrument(write_instrument(tmp_path / "none", None)).human_loadings is None


def test_matching_agrees_with_brute_force() -> None:
    """The matching (Hungarian algorithm) against every permutation and sign, on random
    loadings with more, as many and fewer EFA factors than human ones."""
    rng = np.random.default_rng(7)
    for ka, kb in ((3, 3), (4, 2), (2, 4), (5, 5)):
        ours = pd.DataFrame(rng.normal(size=(10, ka)), columns=[f"F{j + 1}" for j in range(ka)])
        human = pd.DataFrame(rng.normal(size=(10, kb)), columns=[f"H{j + 1}" for j in range(kb)])
        res = match_congruence(ours, human)
        a, b = ours.to_numpy(), human.to_numpy()
        phi = np.abs(a.T @ b) / np.sqrt(np.outer((a**2).sum(0), (b**2).sum(0)))  # |phi| by hand
        if ka >= kb:
            best = max(
                sum(phi[p[j], j] for j in range(kb)) for p in itertools.permutations(range(ka), kb)
            )
        else:
            best = max(
                sum(phi[i, p[i]] for i in range(ka)) for p in itertools.permutations(range(kb), ka)
            )
        got = [v for v in res.phi.values() if v is not None]
        assert len(got) == min(ka, kb) and sum(got) == pytest.approx(best)
        for h, f in res.match.items():
            if f is not None:
                i, j = int(f.lstrip("-F")) - 1, int(h[1:]) - 1
                assert res.phi[h] == pytest.approx(phi[i, j])
                assert f.startswith("-") == (a[:, i] @ b[:, j] < 0)


@pytest.mark.parametrize(
    ("phi", "reading"),
    [
        (1.0, "equal"),
        (0.95, "equal"),
        (0.949, "fair similarity"),
        (0.85, "fair similarity"),
        (0.849, "not equal"),
        (0.0, "not equal"),
    ],
)
def test_lorenzo_seva_ten_berge_reading(phi: float, reading: str) -> None:
    assert congruence_reading(phi) == reading
