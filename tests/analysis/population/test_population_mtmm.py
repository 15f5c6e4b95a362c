"""Multitrait-multimethod validity of population runs (issue 25; Campbell & Fiske, 1959): the
engine on simulated data with known correlations, checked against pandas/scipy and a Fisher-z
interval computed by hand; the reasons for degenerate data; the trait table (shipped and
--mtmm FILE); and a population run end to end, bfi and pb-epqr given to the same respondents by a
loopback server built to answer both instruments' extraversion and neuroticism items alike."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from psymetrics_core.analysis.population.mtmm import (
    TraitTable,
    fisher_ci,
    load_trait_table,
    mtmm,
    mtmm_text,
)
from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from benchmarks.latency_server import LatencyServer  # noqa: E402

TRAITS = ("extraversion", "neuroticism", "openness")
TABLE = TraitTable({t: {"A": t[:3], "B": t.upper()} for t in TRAITS}, "test table")


def _simulated(n: int = 300, seed: int = 3, noise: float = 0.6) -> dict[str, pd.DataFrame]:
    """Two methods A and B measuring three independent latent traits with their own noise, and
    a method factor (shared by A's scales) that correlates A's traits among themselves: the
    population validity r = 1/(1+noise^2 [+ method var]), heterotrait-heteromethod r = 0."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 3))
    method_a = rng.normal(size=n)
    idx = [f"run|p{i}|0" for i in range(n)]
    a = {
        t[:3]: latent[:, k] + 0.5 * method_a + noise * rng.normal(size=n)
        for k, t in enumerate(TRAITS)
    }
    b = {t.upper(): latent[:, k] + noise * rng.normal(size=n) for k, t in enumerate(TRAITS)}
    return {"A": pd.DataFrame(a, index=idx), "B": pd.DataFrame(b, index=idx)}


def test_mtmm_matches_pandas_scipy_and_a_hand_fisher_interval() -> None:
    scores = _simulated()
    m = mtmm(scores, TABLE)
    assert m.reason is None and m.matched_by == "respondent" and m.n_matched == 300
    assert [(v.method, v.trait) for v in m.variables][:3] == [("A", t) for t in TRAITS]
    # independent: pandas' Pearson matrix of the six columns side by side
    both = pd.concat([scores["A"], scores["B"]], axis=1)
    ref = both.corr(method="pearson").to_numpy()
    got = np.array([[np.nan if x is None else x for x in row] for row in m.matrix or []])
    off = ~np.eye(6, dtype=bool)
    np.testing.assert_allclose(got[off], ref[off], rtol=0, atol=1e-12)
    assert len(m.validity) == 3 and len(m.heterotrait_monomethod) == 6
    assert len(m.heterotrait_heteromethod) == 6
    for v in m.validity:
        x, y = scores["A"][v.trait_a[:3]], scores["B"][v.trait_a.upper()]
        res = stats.pearsonr(x, y)  # scipy: r and the t-test p
        assert v.r == pytest.approx(res.statistic, abs=1e-12)
        assert v.p == pytest.approx(res.pvalue, rel=1e-9, abs=1e-300)
        # Fisher z by hand: z = atanh r, se = 1/sqrt(n-3), 1.96 = the normal 97.5% point
        z, se = 0.5 * math.log((1 + v.r) / (1 - v.r)), 1 / math.sqrt(300 - 3)
        lo, hi = math.tanh(z - 1.959964 * se), math.tanh(z + 1.959964 * se)
        assert v.ci95 == pytest.approx((lo, hi), abs=1e-6)
        # ... and scipy's own Fisher-z interval (scipy >= 1.9: PearsonRResult.confidence_interval)
        assert v.ci95 == pytest.approx(tuple(res.confidence_interval(0.95)), abs=1e-9)
        assert v.r > 0.6  # population value 1 / sqrt((1 + .36 + .25) (1 + .36)) = 0.68
    assert all(abs(c.r or 0) < 0.2 for c in m.heterotrait_heteromethod)
    hm_a = [c.r for c in m.heterotrait_monomethod if c.method_a == "A"]
    assert all(0.05 < (r or 0) < 0.3 for r in hm_a)  # the method factor: .25 / 1.61 = 0.16
    counts = {c.criterion: (c.comparisons, c.holds) for c in m.criteria}
    # 1: 3 validity values; 2: 4 heteromethod values per validity value; 3: 2 other traits
    # in each of the 2 methods; 4: 4 triangles (A, B, AB upper, AB lower), 6 pairs of them,
    # 3 orderings of the 3 trait pairs each
    assert counts[1] == (3, 3) and counts[2] == (12, 12) and counts[3] == (12, 12)
    assert counts[4][0] == 18 and 0 <= counts[4][1] <= 18


def test_weak_convergence_fails_the_criteria() -> None:
    """Noise 3: validity r about .1, below the method factor's heterotrait-monomethod values."""
    rng = np.random.default_rng(5)
    n = 300
    latent, meth = rng.normal(size=(n, 2)), rng.normal(size=n)
    a = pd.DataFrame(
        {
            "ext": latent[:, 0] + 2 * meth + 3 * rng.normal(size=n),
            "neu": latent[:, 1] + 2 * meth + 3 * rng.normal(size=n),
        }
    )
    b = pd.DataFrame(
        {
            "EXTRAVERSION": latent[:, 0] + 3 * rng.normal(size=n),
            "NEUROTICISM": latent[:, 1] + 3 * rng.normal(size=n),
        }
    )
    table = TraitTable({t: TABLE.traits[t] for t in TRAITS[:2]}, "t")
    m = mtmm({"A": a, "B": b}, table)
    counts = {c.criterion: (c.comparisons, c.holds) for c in m.criteria}
    # A's E~N (the method factor: 4 / 14 = .29) beats each validity value (1 / sqrt(14 * 10) =
    # .08); B's E~N (population value 0) does not
    hm = {c.method_a: c.r for c in m.heterotrait_monomethod}
    assert all(hm["A"] > (v.r or 1) for v in m.validity)
    assert counts[3] == (4, 2)
    # both validity values are positive, but neuroticism's (r .07, p .21) is not significant
    assert all((v.r or 0) > 0 for v in m.validity) and counts[1] == (2, 1)
    four = m.criteria[3]
    assert four.comparisons == 0 and four.reason and "3+ traits" in four.reason


def test_discrimination_is_judged_on_absolute_values() -> None:
    """B's neuroticism is A's extraversion turned round (r about -.97): the weak extraversion
    validity value (about .2) must not count as higher than it."""
    rng = np.random.default_rng(11)
    n = 400
    lat, e = rng.normal(size=(n, 2)), rng.normal(size=(n, 4))
    a = pd.DataFrame({"ext": lat[:, 0] + 2 * e[:, 0], "neu": lat[:, 1] + e[:, 1]})
    b = pd.DataFrame(
        {"EXTRAVERSION": lat[:, 0] + 2 * e[:, 2], "NEUROTICISM": -a["ext"] + 0.5 * e[:, 3]}
    )
    table = TraitTable({t: TABLE.traits[t] for t in TRAITS[:2]}, "t")
    m = mtmm({"A": a, "B": b}, table)
    ve = next(v for v in m.validity if v.trait_a == "extraversion")
    hh = next(
        c for c in m.heterotrait_heteromethod if c.method_a == "A" and c.trait_a == "extraversion"
    )
    assert ve.r is not None and hh.r is not None and hh.r < -0.9 and 0 < ve.r < 0.4
    # E (.23) beats |A.neu~B.E| (.00) but not |A.ext~B.N| (.98); N (-.02) beats neither
    assert (m.criteria[1].comparisons, m.criteria[1].holds) == (4, 1)


def _three_traits(n: int, b_method: float, seed: int = 2) -> dict[str, pd.DataFrame]:
    """Latent E, N, O correlated .6 (E-N), .3 (E-O), 0 (N-O); method B adds a factor of
    variance ``b_method`` to its N and O scales (raising B's N-O correlation)."""
    rng = np.random.default_rng(seed)
    cov = np.array([[1, 0.6, 0.3], [0.6, 1, 0], [0.3, 0, 1]])
    lat = rng.multivariate_normal(np.zeros(3), cov, size=n)
    meth = np.sqrt(b_method) * rng.normal(size=n)
    a = {t[:3]: lat[:, k] + 0.3 * rng.normal(size=n) for k, t in enumerate(TRAITS)}
    b = {
        t.upper(): lat[:, k] + (meth if k else 0) + 0.3 * rng.normal(size=n)
        for k, t in enumerate(TRAITS)
    }
    return {"A": pd.DataFrame(a), "B": pd.DataFrame(b)}


def test_pattern_criterion_counts_agreeing_orders() -> None:
    """Criterion 4: 4 triangles, 6 pairs of them, 3 orderings each = 18 comparisons. Without a
    method factor every triangle orders E-N > E-O > N-O (all 18 hold); B's N/O method factor
    (variance 1: B's N-O r about .45, above its E-N and E-O) reverses two of the three orders
    between B's triangle and each other one."""
    same = mtmm(_three_traits(3000, 0.0), TABLE).criteria[3]
    assert (same.comparisons, same.holds) == (18, 18)
    other = mtmm(_three_traits(3000, 1.0), TABLE).criteria[3]
    assert other.comparisons == 18 and other.holds == 18 - 3 * 2


def test_persona_matching_of_separate_runs() -> None:
    """Different run keys: respondents matched by persona, each persona's mean score."""
    scores = _simulated(n=40)
    a = scores["A"].set_axis([f"run1|{i}" for i in range(40)])
    b = scores["B"].set_axis([f"run2|{i}" for i in range(40)])
    persona = {
        "A": pd.Series([f"p{i}" for i in range(40)], index=a.index),
        "B": pd.Series([f"p{i}" for i in range(40)], index=b.index),
    }
    m = mtmm({"A": a, "B": b}, TABLE, persona)
    assert m.matched_by == "persona" and m.n_matched == 40
    ref = mtmm(scores, TABLE)
    assert [v.r for v in m.validity] == pytest.approx([v.r for v in ref.validity])


def test_degenerate_reasons_name_traits_and_tasks() -> None:
    scores = _simulated(n=10)
    one = mtmm({"A": scores["A"]}, TABLE)
    assert one.reason and "tasks A" in one.reason and one.matrix is None
    assert one.dropped["openness"].startswith("measured by A here")
    two = TraitTable({"extraversion": TABLE.traits["extraversion"]}, "t")
    assert "traits extraversion" in (mtmm(scores, two).reason or "")
    few = {k: v.iloc[:2] for k, v in scores.items()}
    assert "2 respondents matched across tasks A, B" in (mtmm(few, TABLE).reason or "")
    flat = {"A": scores["A"].assign(neu=1.0), "B": scores["B"]}
    m = mtmm(flat, TABLE)
    neu = next(v for v in m.validity if v.trait_a == "neuroticism")
    assert (
        neu.r is None
        and neu.ci95 is None
        and "A.neu (neuroticism) never varies" in (neu.reason or "")
    )
    assert m.criteria[0].comparisons == 2  # the undefined validity value is not compared
    three = {k: v.iloc[:3] for k, v in scores.items()}
    v3 = mtmm(three, TABLE).validity[0]
    assert v3.r is not None and v3.ci95 is None and "n = 3" in (v3.reason or "")
    assert fisher_ci(1.0, 50) is None and fisher_ci(0.5, 3) is None


def test_shipped_table_names_real_scales() -> None:
    from psymetrics_core.pluginsys.session import Session

    table = load_trait_table()
    insts = Session().instruments()
    for trait, methods in table.traits.items():
        for task, scale in methods.items():
            assert scale in insts[task].scales, (trait, task, scale)
    assert {"bfi", "pb-bfi", "pb-epqr"} <= set(table.methods())


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("traits: []\n", "expected a mapping with a non-empty 'traits'"),
        ("traits:\n  extraversion: bfi\n", "traits.extraversion: expected a mapping TASK: SCALE"),
        ("traits:\n  extraversion: {bfi: 3}\n", "traits.extraversion.bfi: expected TASK: SCALE"),
    ],
)
def test_bad_table_is_one_line_naming_the_field(tmp_path: Path, text: str, expect: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(PsymError, match=expect) as err:
        load_trait_table(path)
    assert str(path) in str(err.value)


def test_text_marks_the_validity_diagonal() -> None:
    lines = mtmm_text(mtmm(_simulated(), TABLE))
    assert lines[0].startswith("MTMM (Campbell & Fiske 1959), table test table: 300 respondents")
    assert lines[5].count("[") == 1 and "criterion 2" in "\n".join(lines)


# -- end to end ---------------------------------------------------------------------------


def _plugin_items(rel: str) -> list[dict[str, str]]:
    root = Path(__file__).resolve().parents[3] / "plugins"
    with (root / rel).open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _server_key(tmp_path: Path) -> tuple[Path, dict[str, tuple[str, str, bool]]]:
    """EPQ-R item texts written for the test (the real ones are not shipped) and the server's
    key: item text -> (task, scale, reverse-keyed)."""
    bfi = _plugin_items("psymetrics-plugin-bfi/psymetrics_plugin_bfi/instruments/bfi/items.csv")
    epq = _plugin_items(
        "psymetrics-plugin-psychobench/psymetrics_plugin_psychobench/instruments/pb-epqr/items.csv"
    )
    key = {r["text"]: ("bfi", r["scale"], r["reverse"] == "1") for r in bfi}
    path = tmp_path / "epqr_items.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text"])
        for r in epq:
            text = f"Test statement number {int(r['id']):03d} of the questionnaire"
            w.writerow([r["id"], text])
            key[text] = ("pb-epqr", r["scale"], r["reverse"] == "1")
    return path, key


def _answer(key: dict[str, tuple[str, str, bool]]) -> object:
    """The loopback model: a persona that is extroverted (neurotic) answers every extraversion
    (neuroticism) item of both instruments in the keyed direction, others the other way; one
    answer in four (a hash of persona and item) is the opposite/neutral one instead, so the
    validity is high but below 1. Every other item: a hash of persona and item."""
    texts = sorted(key, key=len, reverse=True)  # the BFI stems ("Is talkative") are lowered

    def answer(messages: list[dict[str, str]]) -> str:
        persona = messages[0]["content"] if messages[0]["role"] == "system" else ""
        user = messages[-1]["content"].lower()
        text = next(t for t in texts if t.lower() in user)
        task, scale, reverse = key[text]
        h = int(hashlib.sha256((persona + text).encode()).hexdigest(), 16)
        lo, hi = (0, 1) if task == "pb-epqr" else (1, 5)
        if scale == "extraversion" or scale == "neuroticism":
            high = ("extroverted" if scale == "extraversion" else "neurotic") in persona
            high = high != (h % 4 == 0)  # the noise
            value = hi if high != reverse else lo
        else:
            value = lo + h % (hi - lo + 1)
        return str(value)

    return answer


def test_population_run_gives_the_built_in_convergent_validity(tmp_path: Path) -> None:
    pop = tmp_path / "big5.jsonl"
    res = CliRunner().invoke(cli, ["population", "build", "--generate", "binary", "-o", str(pop)])
    assert res.exit_code == 0, res.output
    items, key = _server_key(tmp_path)
    run = tmp_path / "run"
    with LatencyServer(latency=0.0, answer=_answer(key)) as srv:
        args = [
            "eval",
            "--tasks",
            "bfi,pb-epqr",
            "--items",
            f"pb-epqr={items}",
            "--population",
            str(pop),
            "--model",
            "openai-chat",
            "--model-args",
            f"base_url={srv.base_url},model=m",
            "-o",
            str(run),
        ]
        res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    # one analysis, printed as text and written as analysis.json (the report --json prints)
    res = CliRunner().invoke(cli, ["analyze", str(run), "-o", str(tmp_path / "analysis")])
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "analysis" / "analysis.json").read_text())
    m = m["sections"]["population"]["mtmm"]
    assert m["reason"] is None and m["matched_by"] == "respondent" and m["n_matched"] == 32
    assert m["methods"] == ["bfi", "pb-epqr"] and m["traits"] == ["extraversion", "neuroticism"]
    assert set(m["dropped"]) == {"agreeableness", "conscientiousness", "openness"}
    for v in m["validity"]:
        assert v["n"] == 32 and v["r"] > 0.7 and v["ci95"][0] > 0.4, v
    for c in m["heterotrait_heteromethod"] + m["heterotrait_monomethod"]:
        assert abs(c["r"]) < 0.45, c  # the 2^5 design crosses E and N: independent
    crit = {c["criterion"]: (c["comparisons"], c["holds"]) for c in m["criteria"]}
    assert crit[1] == (2, 2) and crit[2] == (4, 4) and crit[3] == (4, 4)
    assert crit[4] == (0, 0)  # two traits: nothing to order
    assert "MTMM (Campbell & Fiske 1959)" in res.output and "criterion 2" in res.output
    own = tmp_path / "own.yaml"
    own.write_text(
        "traits:\n  outgoing: {bfi: extraversion, pb-epqr: extraversion}\n"
        "  worried: {bfi: neuroticism, pb-epqr: nope}\n"
    )
    res = CliRunner().invoke(cli, ["analyze", str(run), "--mtmm", str(own)])
    assert isinstance(res.exception, PsymError)
    assert f"{own}: traits.worried.pb-epqr: task pb-epqr has no scale 'nope'" in str(res.exception)


def test_separate_runs_are_matched_by_persona(tmp_path: Path) -> None:
    """bfi and pb-epqr in two evals (first 20 items each: 4-5 extraversion and 4 neuroticism
    items): the run keys differ, so respondents are matched by persona."""
    pop = tmp_path / "big5.jsonl"
    res = CliRunner().invoke(cli, ["population", "build", "--generate", "binary", "-o", str(pop)])
    assert res.exit_code == 0, res.output
    items, key = _server_key(tmp_path)
    with LatencyServer(latency=0.0, answer=_answer(key)) as srv:
        for task in ("bfi", "pb-epqr"):
            args = [
                "eval",
                "--tasks",
                task,
                "--limit",
                "20",
                "--population",
                str(pop),
                "--model",
                "openai-chat",
                "--model-args",
                f"base_url={srv.base_url},model=m",
                "-o",
                str(tmp_path / task),
            ]
            extra = ["--items", f"pb-epqr={items}"] if task == "pb-epqr" else []
            res = CliRunner().invoke(cli, args + extra)
            assert res.exit_code == 0, res.output
    res = CliRunner().invoke(
        cli, ["analyze", str(tmp_path / "bfi"), str(tmp_path / "pb-epqr"), "--json"]
    )
    assert res.exit_code == 0, res.output
    m = json.loads(res.output)["sections"]["population"]["mtmm"]
    assert m["matched_by"] == "persona" and m["n_matched"] == 32
    assert all(v["n"] == 32 and v["r"] > 0.5 for v in m["validity"]), [
        (v["r"], v["reason"]) for v in m["validity"]
    ]
