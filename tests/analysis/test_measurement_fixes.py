"""Issue 10 item 7: measurement errors of ``psym analyze``, each against a named reference."""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from psymetrics_core.administer.runner import evaluate
from psymetrics_core.analysis import reliability, validity
from psymetrics_core.analysis.report import analyze
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Completion

REPO = Path(__file__).resolve().parents[2]
SR2K_ITEMS = (
    REPO / "plugins/psymetrics-plugin-sr2k/psymetrics_plugin_sr2k/instruments/sr2k/items.csv"
)

# 24 respondents x 5 Likert items (1-5), item i5 written so that it correlates negatively
# with the others (an item that "probably should be reversed"). Generated once from a
# one-factor model (loadings .8 .7 .6 .5 -.6, numpy default_rng(7)) and kept literally.
OMEGA_DATA = [
    [3, 3, 1, 2, 3],
    [3, 2, 3, 2, 2],
    [4, 2, 3, 4, 3],
    [2, 2, 2, 1, 4],
    [4, 1, 3, 3, 3],
    [3, 3, 1, 2, 4],
    [3, 4, 3, 4, 4],
    [4, 4, 4, 4, 1],
    [2, 2, 4, 4, 2],
    [2, 3, 1, 2, 3],
    [4, 4, 3, 3, 2],
    [4, 3, 3, 4, 3],
    [3, 2, 3, 3, 4],
    [3, 2, 3, 2, 5],
    [3, 3, 2, 3, 1],
    [2, 3, 3, 4, 5],
    [1, 1, 2, 3, 4],
    [2, 3, 3, 2, 3],
    [1, 1, 2, 1, 5],
    [2, 2, 2, 2, 2],
    [1, 2, 1, 3, 3],
    [3, 2, 4, 3, 2],
    [3, 3, 2, 2, 4],
    [3, 4, 3, 3, 2],
]
# Reference values computed once with R 4.2.2 and psych 2.2.9 (Debian packages r-base-core,
# r-cran-psych) on OMEGA_DATA:
#   psych::omega(d, nfactors = 1, fm = "ml", flip = FALSE)$omega.tot  -> 0.5370874126
#   psych::fa(d, nfactors = 1, fm = "ml")$loadings                    -> the loadings below
# (with |loadings| the omega of the old implementation was 0.7311; flip = TRUE gives 0.7321)
R_PSYCH_OMEGA = 0.5370874126
R_PSYCH_LOADINGS = [0.666970518587, 0.447000327442, 0.651986136571, 0.699083279340, -0.486938584042]


def test_omega_uses_signed_loadings_as_r_psych():
    d = pd.DataFrame(OMEGA_DATA, columns=["i1", "i2", "i3", "i4", "i5"])
    res = reliability.mcdonald_omega(d)
    assert res["method"] == "ml"
    assert res["omega"] == pytest.approx(R_PSYCH_OMEGA, abs=1e-4)
    assert res["loadings"] == pytest.approx(R_PSYCH_LOADINGS, abs=1e-3)
    assert res["negative_items"] == ["i5"]
    assert "i5" in res["warnings"][0] and "reversed" in res["warnings"][0]
    assert res["rows_used"] == "24 of 24"


def test_singular_correlation_matrix_gives_a_reason_not_nan():
    # item c = a + b exactly: the correlation matrix is singular
    a = [1, 2, 3, 4, 5, 2, 4, 1]
    b = [2, 1, 2, 5, 3, 3, 1, 2]
    d = pd.DataFrame({"a": a, "b": b, "c": [x + y for x, y in zip(a, b, strict=True)]})
    res = reliability.mcdonald_omega(d)
    assert res["omega"] is None and "singular" in res["note"]


# Reference: R 4.2.2, psych 2.2.9: psych::alpha(d)$total$raw_alpha (use = "pairwise") ->
# 0.9115310874; psych::alpha(na.omit(d))$total$raw_alpha -> 0.9025641026 (5 complete rows).
ALPHA_DATA = pd.DataFrame(
    {
        "a": [1, 2, 3, 4, 5, 2, None, 4],
        "b": [2, 1, 4, 3, 5, None, 3, 4],
        "c": [1, 3, 2, 4, 4, 2, 3, None],
        "d": [2, 2, 3, 5, 4, 1, 2, 5],
    }
)


def test_alpha_listwise_and_pairwise_with_rows_used():
    lw = reliability.cronbach_alpha(ALPHA_DATA)
    assert lw["alpha"] == pytest.approx(0.9025641026, abs=1e-9)
    assert lw["rows_used"] == "5 of 8" and lw["deletion"] == "listwise"
    pw = reliability.cronbach_alpha(ALPHA_DATA, "pairwise")
    assert pw["alpha"] == pytest.approx(0.9115310874, abs=1e-9)
    assert pw["rows_used"] == "8 of 8" and pw["ci95"] is None


def test_alpha_ci_matches_pingouin():
    import pingouin as pg

    d = ALPHA_DATA.dropna()
    a, ci = pg.cronbach_alpha(data=d)
    res = reliability.cronbach_alpha(d)
    assert res["alpha"] == pytest.approx(a, abs=1e-12)
    assert res["ci95"] == pytest.approx(list(ci), abs=5e-4)  # pingouin rounds to 3 decimals


def test_default_hypotheses_name_existing_scales(fresh_plugins):
    for h in validity.DEFAULT_HYPOTHESES:
        for name in (h.a, h.b):
            task, _, scale = name.partition(".")
            assert scale in fresh_plugins.get_instrument(task).scales, name
    validity.check_hypotheses(validity.DEFAULT_HYPOTHESES, (), fresh_plugins)  # no error
    hyp = [validity.parse_hypothesis("asi.total~sr2k.total:+")]
    with pytest.raises(PsymError, match="no score 'sr2k.total'.*racism"):
        validity.check_hypotheses(hyp, (), fresh_plugins)


class _ValueBackend:
    """Unit-test backend: answers a value fixed by (item text, seed), whatever the option order."""

    def identity(self) -> dict[str, str]:
        return {"backend": "scripted"}

    def generate(self, prompts, settings, progress=None):
        out = []
        for p in prompts:
            stmt = re.search(r"(?:Statement|Question): (.*)", p.text)
            key = f"{stmt.group(1) if stmt else p.text}:{settings.seed}".encode()
            low = min(o.value for o in p.options)
            value = low + hashlib.sha256(key).digest()[0] % len(p.options)
            out.append(Completion(text=f"{value}"))
        return out


def test_a_hypothesis_naming_a_missing_scale_is_an_error(fresh_plugins, tmp_path: Path):
    out = tmp_path / "asi"
    evaluate(["asi"], backend=_ValueBackend(), limit=4, output=out, session=fresh_plugins)
    with pytest.raises(PsymError, match="sr2k.total"):
        analyze([out], hypotheses=["asi.total~sr2k.total:+"], session=fresh_plugins)


def _samples(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]


def _alpha_by_hand(mat: pd.DataFrame) -> float:
    # Cronbach (1951): k/(k-1) * (1 - sum of item variances / variance of the total)
    k = mat.shape[1]
    return k / (k - 1) * (1 - mat.var(ddof=1).sum() / mat.sum(axis=1).var(ddof=1))


def test_sr2k_alternative_item3_is_analysed_with_its_own_keys(fresh_plugins, tmp_path: Path):
    out = tmp_path / "sr2k"
    evaluate(["sr2k"], backend=_ValueBackend(), repeats=8, output=out, session=fresh_plugins)
    rows = _samples(out)
    # racism_alt_item3 by hand: reverse-keyed items (the CSV's 'reverse' column; all on
    # 1..4) are 5 - x; item 3 (speed, 1-3) maps 1 -> 1, 2 -> 4, 3 -> 2.5; then the whole
    # scale is inverted (5 - x on 1..4)
    alt3 = {1: 1.0, 2: 4.0, 3: 2.5}
    with SR2K_ITEMS.open(newline="", encoding="utf-8") as fh:
        reverse = {r["id"] for r in csv.DictReader(fh) if r["reverse"] == "1"}
    assert reverse and "3" not in reverse

    def by_hand(item: str, a: int) -> float:
        base = alt3[a] if item == "3" else (5 - a if item in reverse else a)
        return 5 - base

    mat = pd.DataFrame(
        [{"seed": r["seed"], "item": r["item"], "v": by_hand(r["item"], r["answer"])} for r in rows]
    ).pivot(index="seed", columns="item", values="v")
    rel = analyze([out], session=fresh_plugins)["analyses"]["sr2k"]["sr2k"]["reliability"][
        "racism_alt_item3"
    ]
    assert rel["alpha"] == pytest.approx(_alpha_by_hand(mat), abs=1e-12)
    assert rel["rows_used"] == "8 of 8"


PVQ_TEXTS = "id,text\n" + "".join(
    f"{i},Portrait number {i} of the questionnaire.\n" for i in range(1, 41)
)


def test_pvq_centred_scales_are_analysed_minus_mrat(fresh_plugins, tmp_path: Path):
    texts = tmp_path / "pvq_texts.csv"
    texts.write_text(PVQ_TEXTS)
    out = tmp_path / "pvq"
    evaluate(
        ["pvq40"],
        backend=_ValueBackend(),
        repeats=6,
        output=out,
        item_files={"pvq40": texts},
        session=fresh_plugins,
    )
    rows = pd.DataFrame(_samples(out))
    # by hand: MRAT = mean of all 40 answers of an administration (no reverse-keyed items);
    # the centred item value is answer - MRAT
    rows["mrat"] = rows.groupby("seed")["answer"].transform("mean")
    rows["centred"] = rows["answer"] - rows["mrat"]
    members = [
        r["item"] for r in _samples(out)[:40] if "self_direction" in r["item_meta"]["scales"]
    ]
    sub = rows[rows["item"].isin(members)]
    mat = sub.pivot(index="seed", columns="item", values="centred")
    rel = analyze([out], session=fresh_plugins)["analyses"]["pvq"]["pvq40"]["reliability"]
    assert rel["self_direction_centred"]["alpha"] == pytest.approx(_alpha_by_hand(mat), abs=1e-9)
    raw = sub.pivot(index="seed", columns="item", values="answer")
    assert rel["self_direction"]["alpha"] == pytest.approx(_alpha_by_hand(raw), abs=1e-9)
    assert not np.isclose(_alpha_by_hand(mat), _alpha_by_hand(raw))  # the test can tell


def test_norms_report_statistics_only_where_defined(fresh_plugins, tmp_path: Path, monkeypatch):
    inst = fresh_plugins.get_instrument("bfi")
    group = {"name": "Crowd", "mean": 3.25, "sd": 0.9, "n": 6076, "source": "test", "year": 2003}
    monkeypatch.setitem(inst.extra, "norms", {"extraversion": [group]})
    out = tmp_path / "grid"
    # a four-cell grid (option order x end of prompt), one administration per cell
    evaluate(
        ["bfi"],
        backend=_ValueBackend(),
        limit=8,
        output=out,
        conditions=["original", "reversed-options", "changed-eos"],
        session=fresh_plugins,
    )
    n = analyze([out], session=fresh_plugins)["analyses"]["grid"]["bfi"]["norms"]
    [row] = n["scales"]["extraversion"]
    assert row["model_n"] == 1 and row["model_n_total"] == 4
    assert row["model_sd"] is None and "g" not in row["hedges_g"]
    assert "2+ administrations" in row["hedges_g"]["note"]
    assert "p" not in row["psychobench_test"]
    assert row["z"] is not None  # a z of the one score against the norm is defined
