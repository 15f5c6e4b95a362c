"""The population part of issue 25 in the report and in ``psym analyze``: variance ratio
against the human norms and acquiescence (checked by hand with numpy), and the report's
population section (criterion table, loadings, fit cut-offs, determinism) from a population
run against the loopback server of test_population.py."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from binary_population import LatencyServer, by_extraversion
from click.testing import CliRunner

from psymetrics_core.analysis.population.data import ScaleStructure
from psymetrics_core.analysis.population.entry import PopulationEntry
from psymetrics_core.analysis.population.humans import NO_NORMS, human_diagnostics
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.population.runs import (
    PopulationData,
    present_structure,
    task_analysis,
    task_text,
)
from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import cli
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.report.population_sections import FIT_CUTOFFS, fit_verdict


@pytest.fixture(scope="module")
def session() -> Session:
    return Session()


def _pop(values: pd.DataFrame, task: str) -> PopulationData:
    persona = pd.Series([f"p{i}" for i in range(len(values))], index=values.index)
    n = int(values.size)
    return PopulationData(
        task, values, persona, pd.DataFrame(index=values.index), n, n, {"original"}
    )


def _one_factor(items: list[str], n: int, seed: int) -> pd.DataFrame:
    """Answers 1-5 driven by one latent trait per respondent (plus item noise)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n, 1))
    raw = 3 + 1.1 * theta + rng.normal(scale=0.8, size=(n, len(items)))
    return pd.DataFrame(
        np.clip(np.rint(raw), 1, 5), columns=items, index=[f"r{i}" for i in range(n)]
    )


def test_variance_ratio_and_acquiescence_by_hand(session: Session) -> None:
    inst = session.get_instrument("bfi")
    items = [it.id for it in inst.forms["original"]]
    values = _one_factor(items, 60, seed=3)
    pop = _pop(values, "bfi")
    structure = present_structure(ScaleStructure.from_instrument(inst), pop)
    typed = task_analysis(pop, structure, PopulationOptions(n_boot=20), inst)
    e = typed.to_json()
    # by hand: extraversion = mean of items 1, 6R, 11, 16, 21R, 26, 31R, 36 (R: 6 - x)
    ext = ["1", "6", "11", "16", "21", "26", "31", "36"]
    keyed = values[ext].copy()
    for r in ("6", "21", "31"):
        keyed[r] = 6 - keyed[r]
    score = keyed.mean(axis=1).to_numpy()
    crowd_sd = 0.9  # BFI extraversion, group Crowd (Srivastava et al., 2003, via PsychoBench)
    row = next(r for r in e["variance_ratio"] if r["scale"] == "extraversion")
    assert row["ratio"] == pytest.approx(np.var(score, ddof=1) / crowd_sd**2, rel=1e-12)
    assert row["human_sd"] == crowd_sd and row["reason"] is None
    # acquiescence: mean over respondents of the mean RAW answer (no reverse keying) - 3
    assert e["acquiescence"] == pytest.approx(values.to_numpy().mean(axis=1).mean() - 3.0)
    assert e["acquiescence_reason"] is None
    dist = e["distributions"]["extraversion"]
    assert dist["scores"] == sorted(score.tolist())
    assert dist["norm"]["mean"] == 3.25 and "Srivastava" in dist["norm"]["source"]
    text = "\n".join(task_text("bfi", typed))
    assert "variance ratio vs human norms (group Crowd: Srivastava" in text
    assert f"extraversion {row['ratio']:.2f}" in text
    assert "acquiescence (mean raw answer - scale midpoint)" in text


def test_flat_population_is_flagged_and_no_norms_give_the_reason(session: Session) -> None:
    inst = session.get_instrument("bfi")
    items = [it.id for it in inst.forms["original"]]
    values = _one_factor(items, 40, seed=5)
    values.loc[:, :] = 4.0  # everyone agrees with everything: no spread, all acquiescence
    values.iloc[0, 0] = 5.0
    pop = _pop(values, "bfi")
    structure = present_structure(ScaleStructure.from_instrument(inst), pop)
    e = human_diagnostics(pop_resp(pop), structure, inst, "original")
    assert e.acquiescence == pytest.approx(1.0 + 1 / 44 / 40)
    ext = next(r for r in e.variance_ratio if r.scale == "extraversion")
    assert ext.ratio is not None and ext.ratio < 0.01
    text = "\n".join(
        task_text("bfi", task_analysis(pop, structure, PopulationOptions(n_boot=5), inst))
    )
    assert re.search(r"extraversion 0\.\d\d FLAT", text)  # flagged once per scale, explained once
    assert text.count("straight-lining signature") == 1
    mfq = session.get_instrument("mfq")
    mitems = [it.id for it in mfq.forms["original"] if it.scored]
    mpop = _pop(_one_factor(mitems, 30, seed=1), "mfq")
    mstruct = present_structure(ScaleStructure.from_instrument(mfq), mpop)
    m = human_diagnostics(pop_resp(mpop), mstruct, mfq, "original")
    assert {r.reason for r in m.variance_ratio} == {NO_NORMS}
    assert all(r.ratio is None for r in m.variance_ratio)
    assert all(d.norm is None for d in m.distributions.values())
    assert m.acquiescence is not None  # the midpoint needs no norms


def pop_resp(pop: PopulationData):  # noqa: ANN201
    from psymetrics_core.analysis.population.data import Responses

    return Responses(pop.values, pop.persona)


@pytest.mark.parametrize(
    ("key", "value", "verdict"),
    [
        ("cfi", 0.96, "good"),
        ("cfi", 0.93, "acceptable"),
        ("cfi", 0.89, "poor"),
        ("tli", 0.95, "good"),
        ("rmsea", 0.06, "good"),
        ("rmsea", 0.07, "acceptable"),
        ("rmsea", 0.081, "poor"),
        ("srmr", 0.08, "good"),
        ("srmr", 0.09, "poor"),
        ("pvalue", 0.2, "not rejected"),
        ("pvalue", 0.01, "rejected"),
        ("cfi", None, ""),
    ],
)
def test_fit_cutoffs_hu_bentler(key: str, value: float | None, verdict: str) -> None:
    assert fit_verdict(key, value) == verdict
    assert {c.key for c in FIT_CUTOFFS} == {"cfi", "tli", "rmsea", "srmr", "pvalue"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """32 binary profiles x bfi items 1-20, and x mfq items 1-6 (no norms), on the server of
    tests/binary_population.py ("5" for an extroverted persona, "1" otherwise)."""
    tmp = tmp_path_factory.mktemp("poprep")
    pop = tmp / "big5.jsonl"
    res = CliRunner().invoke(cli, ["population", "build", "--generate", "binary", "-o", str(pop)])
    assert res.exit_code == 0, res.output
    out = {}
    with LatencyServer(latency=0.0, answer=by_extraversion) as srv:
        for task, limit in (("bfi", "20"), ("mfq", "6")):
            args = [
                "eval",
                "--tasks",
                task,
                "--population",
                str(pop),
                "--limit",
                limit,
                "--model",
                "openai-chat",
                "--model-args",
                f"base_url={srv.base_url},model=m",
                "-o",
                str(tmp / task),
            ]
            res = CliRunner().invoke(cli, args)
            assert res.exit_code == 0, res.output
            out[task] = tmp / task
    return out


def _report(run: Path, out: Path, *extra: str) -> str:
    res = CliRunner().invoke(cli, ["report", str(run), "-o", str(out), *extra])
    assert res.exit_code == 0, res.output
    return out.read_text()


def _table(html: str, cls: str) -> str:
    m = re.search(rf'<table class="{cls}">(.*?)</table>', html, flags=re.S)
    assert m, f"no table {cls}"
    return m.group(1)


def test_report_population_section(runs: dict[str, Path], tmp_path: Path) -> None:
    html = _report(runs["bfi"], tmp_path / "a.html")
    assert '<section id="population">' in html
    crit = _table(html, "pop-criterion")
    # extraversion items 1, 6R, 11, 16: 4.0 (extroverted) vs 2.0: perfect separation
    row = re.search(r"<td>extraversion</td><td>extraversion</td><td>AUC</td><td>([^<]*)</td>", crit)
    assert row and row.group(1) == "1.00"
    assert crit.count("<td>AUC</td>") == 5
    cut = _table(html, "pop-cutoffs")
    assert "≥ 0.95 good; ≥ 0.9 acceptable" in cut and "≤ 0.06 good; ≤ 0.08 acceptable" in cut
    assert "Hu &amp; Bentler (1999)" in cut and "≤ 0.08 good" in cut
    loads = _table(html, "pop-loadings")
    assert "<b>extraversion</b>" in loads and "undefined:" in loads  # answers all 1 or all 5
    assert "<th>RMSEA [90% CI]</th>" in _table(html, "pop-fit")
    ratio = _table(html, "pop-ratio")
    # every extraversion score is 2.0 or 4.0, half each: SD by hand
    sd = float(np.std([2.0] * 16 + [4.0] * 16, ddof=1))
    assert f"<td>{sd**2 / 0.9**2:.2f}</td>" in ratio
    assert 'role="img"' in html and "human norm" in html  # the distributions figure
    again = _report(runs["bfi"], tmp_path / "b.html")
    assert again == html  # same runs, same bytes


def test_report_criterion_option_and_no_norms(runs: dict[str, Path], tmp_path: Path) -> None:
    html = _report(runs["bfi"], tmp_path / "c.html", "--criterion", "neuroticism=extraversion")
    crit = _table(html, "pop-criterion")
    assert crit.count("<td>AUC</td>") == 1 and "<td>neuroticism</td><td>extraversion</td>" in crit
    res = CliRunner().invoke(
        cli,
        [
            "report",
            str(runs["bfi"]),
            "-o",
            str(tmp_path / "d.html"),
            "--criterion",
            "nope=extraversion",
        ],
    )
    # a PsymError: the psym entry point prints it as one line (no traceback)
    assert isinstance(res.exception, PsymError) and "has no scale 'nope'" in str(res.exception)
    mfq = _report(runs["mfq"], tmp_path / "m.html")
    assert NO_NORMS in _table(mfq, "pop-ratio")
    assert "This instrument has no human norms" in mfq


def test_analyze_json_has_the_new_keys(runs: dict[str, Path]) -> None:
    res = CliRunner().invoke(cli, ["analyze", str(runs["bfi"]), "--json"])
    assert res.exit_code == 0, res.output
    e = json.loads(res.output)["sections"]["population"]["bfi"]
    assert set(e) >= {"variance_ratio", "acquiescence", "acquiescence_reason", "distributions"}
    # half the personas answer 5 and half 1 to every item: mean raw answer 3 = the midpoint
    assert e["acquiescence"] == pytest.approx(0.0)
    assert e["distributions"]["extraversion"]["scores"] == [2.0] * 16 + [4.0] * 16


@pytest.mark.parametrize(("items", "free", "moments"), [(["a"], 2, 1), (["a", "b"], 4, 3)])
def test_cfa_of_a_scale_cut_short_is_not_identified(items, free, moments) -> None:  # noqa: ANN001
    """A scale left with 1 or 2 items (``--limit``): one factor has more free parameters
    (loadings + residual variances, factor variance fixed) than the p(p+1)/2 (co)variances, so
    the fit is None with the reason (a 1-item scale used to raise numpy's ValueError)."""
    from psymetrics_core.analysis.population.cfa import cfa

    df = pd.DataFrame(np.random.default_rng(0).normal(size=(50, 3)), columns=["a", "b", "c"])
    r = cfa(df, ScaleStructure({"s": tuple(items)}))
    assert r.fit is None
    assert r.reason == (
        f"model not identified: {free} free parameters for {moments} (co)variances of "
        f"{len(items)} item{'s' if len(items) > 1 else ''} ({', '.join(items)})"
    )


def _contract_parts(entry: PopulationEntry) -> PopulationEntry:
    """``entry`` with the parts other modules of issue 25 add (invariance ladder, parallel
    analysis, EFA with congruence, GRMs), as the typed records those modules return, with
    chosen numbers the rendering test looks for."""
    from psymetrics_core.analysis.population.dimensionality import ParallelAnalysis
    from psymetrics_core.analysis.population.entry import (
        Congruence,
        EFAEntry,
        InvarianceEntry,
        StructureParts,
    )
    from psymetrics_core.analysis.population.fitstats import FitIndices
    from psymetrics_core.analysis.population.invariance import InvarianceResult, InvarianceStep
    from psymetrics_core.analysis.population.irt import GRMItem, GRMResult

    fit = FitIndices(
        chisq=30.1,
        df=24,
        pvalue=0.18,
        cfi=0.97,
        tli=0.955,
        rmsea=0.05,
        rmsea_ci90=(0.0, 0.09),
        srmr=0.07,
        n=300,
        baseline_chisq=900.0,
        baseline_df=36,
    )
    worse = replace(fit, chisq=60.0, df=30, pvalue=0.001, cfi=0.91, rmsea=0.085)
    steps = [
        InvarianceStep("configural", fit, decision="baseline"),
        InvarianceStep(
            "metric",
            worse,
            29.9,
            6,
            0.00004,
            -0.06,
            0.035,
            False,
            "ΔCFI -0.060 < -0.01: metric invariance rejected",
        ),
    ]
    efa = EFAEntry(
        2,
        "oblimin",
        "minres",
        {"1": [0.71, 0.02], "6": [float("nan"), 0.4]},
        ["F1", "F2"],
        [[1, 0.3], [0.3, 1]],
        congruence=Congruence(phi={"F1": 0.93, "F2": None}),
    )
    entry.structure = StructureParts(
        ParallelAnalysis(1, (3.1, 0.9), (1.4, 1.2), 0.95),
        efa,
        invariance=InvarianceEntry("condition", InvarianceResult({"a": 150, "b": 150}, steps)),
    )
    entry.irt = {
        "extraversion": GRMResult(
            "extraversion",
            60,
            [GRMItem("1", 1.8, (-1.2, -0.3, 0.4, 1.5), (1, 2, 3, 4, 5))],
            information=[2.0],
            theta=(0.0,),
        ),
        "openness": GRMResult("openness", 60, reason="items that never vary: 5"),
    }
    return entry


def test_report_renders_numbers_cutoffs_and_contract_parts(
    runs: dict[str, Path], tmp_path: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rendering: an entry computed on simulated one-factor answers (real CFA loadings and fit)
    with the contract's other keys, in place of the run's own section."""
    from psymetrics_core.analysis.population.entry import PopulationAnalysis
    from psymetrics_core.report import build_report, load_runs_for_report
    from psymetrics_core.report import population_sections as P

    inst = session.get_instrument("bfi")
    items = [it.id for it in inst.forms["original"]]
    pop = _pop(_one_factor(items, 300, seed=11), "bfi")
    structure = present_structure(ScaleStructure.from_instrument(inst), pop)
    entry = _contract_parts(task_analysis(pop, structure, PopulationOptions(n_boot=5), inst))
    ext = entry.cfa["extraversion"]
    assert ext.fit is not None, ext.reason
    ext.heywood = [f"{ext.loadings[0].item}: standardized loading 1.020 on F_x"]
    from test_population_mtmm import TABLE, _simulated

    from psymetrics_core.analysis.population.mtmm import mtmm

    m = mtmm(_simulated(), TABLE)
    part = m.to_json()
    monkeypatch.setattr(
        P, "population_analysis", lambda *a, **k: PopulationAnalysis({"bfi": entry}, m)
    )
    html = build_report(load_runs_for_report([runs["bfi"]]), session)
    loads = _table(html, "pop-loadings")
    first = ext.loadings[0]
    assert f'<td>{first.item}</td><td class="fired">{first.std:.3f}</td>' in loads
    assert "standardized loading 1.020" in loads  # the Heywood case named in its row
    fit = _table(html, "pop-fit")
    f = ext.fit
    assert f"{f.cfi:.3f}" in fit and fit_verdict("cfi", f.cfi) in fit
    assert re.search(r'class="fit-(good|acceptable|poor)"', fit)
    inv = _table(html, "pop-invariance")
    assert "<td>metric</td>" in inv and "metric invariance rejected" in inv
    assert '<td title="the first step of the ladder">—' in inv  # configural has no Δ
    assert '<span class="verdict">acceptable</span>' in inv  # metric CFI .91
    assert "does not hold" in inv and "[0.000, 0.090]" in inv
    assert "<td>0.71</td>" in _table(html, "pop-efa") and "oblimin" in html
    assert "Tucker's congruence" in html and 'title="no human loadings">—' in html
    assert "<td>1.80</td><td>-1.20, -0.30, 0.40, 1.50</td>" in _table(html, "pop-irt")
    assert "undefined: items that never vary: 5" in html
    assert "<td>yes</td>" in _table(html, "pop-parallel")
    assert "Multitrait-multimethod" in html
    grid, valid = _table(html, "pop-mtmm"), _table(html, "pop-mtmm-validity")
    v = part["validity"][0]  # the engine's first validity value, its interval and n
    assert f'<td class="validity">{v["r"]:.2f}</td>' in grid
    assert f"<td>{v['r']:.2f}</td><td>[{v['ci95'][0]:.2f}, {v['ci95'][1]:.2f}]</td>" in valid
    crit = _table(html, "pop-mtmm-criteria")
    assert all(
        f"<td>{c['holds']}</td><td>{c['comparisons']}</td>" in crit for c in part["criteria"]
    )


def test_no_forest_plot_of_every_respondent_against_the_first(tmp_path: Path) -> None:
    """A population run's cells are respondents: the report does not draw each one's score
    difference from the first respondent's (the population section compares people)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from benchmarks.latency_server import LatencyServer as HashServer  # answers from a hash

    pop = tmp_path / "big5.jsonl"
    assert (
        CliRunner()
        .invoke(cli, ["population", "build", "--generate", "binary", "-o", str(pop)])
        .exit_code
        == 0
    )
    with HashServer(latency=0.0) as srv:  # model "hash": not the shared cache's "m" answers
        res = CliRunner().invoke(
            cli,
            [
                "eval",
                "--tasks",
                "bfi",
                "--population",
                str(pop),
                "--sample",
                "6",
                "--limit",
                "20",
                "--model",
                "openai-chat",
                "--model-args",
                f"base_url={srv.base_url},model=hash",
                "-o",
                str(tmp_path / "run"),
            ],
        )
    assert res.exit_code == 0, res.output
    html = _report(tmp_path / "run", tmp_path / "r.html")
    assert '<section id="population">' in html and "Forest plot of" not in html
    assert "treats the respondents as people" in html and "not people" not in html
