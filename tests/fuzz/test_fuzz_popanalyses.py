"""Fuzz: the population analyses under hostile input (issue 31, items 1 and 10).

On a long response file (``psym analyze --task T --responses FILE``) and the analyses' own
functions:

- CFA models: over the factor bound (a 2,000-factor model), a factor named like an item (one
  line each); locally under-identified models (a factor without a scale, a one-indicator
  factor beside another, a second-order factor over two first-order factors: no fit printed,
  the reason instead); a saturated model (df 0: its fit is exact by construction, so no
  verdict, the caveat on the screen and in the JSON);
- ``--group``/``--cluster`` naming the file's item, response or respondent column (one line
  each);
- EFA with fewer respondents than free parameters (refused with the reason); criterion AUC of
  a constant run (null with the reason); ``--criterion total=...`` (the composite scale
  ``psym show asi`` lists) accepted; acquiescence's reason only where its value is null;
  "items that never vary" in natural order; the report's fit verdicts withheld where a fit
  says nothing; third-party warnings held back (a real ``psym`` process, so the warnings would
  reach its stderr).

References: the parameter count of a k-factor EFA of p items, p k + p - k(k - 1)/2 (Lawley &
Maxwell 1971, ch. 2); a one-factor model of three indicators is just identified, df 0 and
chi-square 0 (Bollen 1989, p. 244; lavaan prints CFI 1 for it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from harness import expect_clean_error, run_cli, shared_session

from psymetrics_core.analysis.population.fitstats import (
    SATURATED,
    baseline_chisq,
    constant_items,
    fit_indices,
)
from psymetrics_core.cli import analyze_cmd, cli
from psymetrics_core.report.population_sections import _fit_cells

ITEMS = [str(i) for i in range(1, 13)]  # bfi items 1-12: every Big Five scale has 2+ of them


def _long(path: Path, n: int, *, seed: int = 7, items: list[str] = ITEMS, extra=None) -> Path:
    """``n`` respondents answering ``items`` on 1-5 from one common factor (loading .8, so the
    items covary), with a two-valued label ``flag``."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(n)
    rows = []
    for r in range(n):
        for it in items:
            x = int(np.clip(np.rint(3 + 0.8 * g[r] + 0.6 * rng.standard_normal()), 1, 5))
            rows.append({"respondent": f"r{r}", "item": it, "response": x, "flag": r % 2})
    frame = pd.DataFrame(rows)
    if extra is not None:
        frame = extra(frame)
    frame.to_csv(path, index=False)
    return path


def _analyze(*args: str) -> dict:
    res = CliRunner().invoke(cli, ["analyze", *args, "--json"], obj=shared_session())
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _json_and_screen(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[dict, str]:
    """``psym analyze ARGS --json`` and ``psym analyze ARGS`` (the screen), both through the
    CLI, on one analysis: the second command's ``analyze_responses`` call, the same
    arguments as the first's, gets the report the first computed (the analysis is
    deterministic; what differs between the two commands is only the rendering)."""
    real = analyze_cmd.analyze_responses
    done: dict[str, object] = {}

    def once(*a: object, **kw: object) -> object:
        key = repr((a, sorted(kw.items())))
        if key not in done:
            done[key] = real(*a, **kw)
        return done[key]

    monkeypatch.setattr(analyze_cmd, "analyze_responses", once)
    rep = _analyze(*args)
    res = CliRunner().invoke(cli, ["analyze", *args], obj=shared_session())
    monkeypatch.setattr(analyze_cmd, "analyze_responses", real)
    assert len(done) == 1, "the two commands analysed different inputs"
    assert res.exit_code == 0, res.output
    return rep, res.output


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _long(tmp_path_factory.mktemp("popanalyses") / "long.csv", 200)


def _model(tmp_path: Path, text: str) -> str:
    path = tmp_path / "model.lav"
    path.write_text(text)
    return str(path)


# -- CFA models --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "expect"),
    [
        (
            "2000-factors",
            "".join(f"F{i} =~ 1 + 2 + 3\n" for i in range(2000)),
            "2,000 factors and 6,000 loadings and covariances; at most 100 factors",
        ),
        (
            "factor-named-like-an-item",
            "E =~ 1 + 6 + 11\n3 =~ 2 + 7 + 12\n",
            "line 2: factor '3' is named like an item of task bfi",
        ),
    ],
)
def test_fuzz_cfa_model_refused(data: Path, tmp_path: Path, name: str, text: str, expect: str):
    argv = [
        "analyze",
        "--task",
        "bfi",
        "--responses",
        str(data),
        "--cfa-model",
        _model(tmp_path, text),
    ]
    res = expect_clean_error(lambda: run_cli(argv), ["model.lav"], label=name)
    assert expect in res.message, res.message


@pytest.mark.parametrize(
    ("name", "text", "expect"),
    [
        (
            "one-indicator-beside-another",
            "E =~ 1 + 6 + 11 + 2\nA =~ 7\n",
            "factor A has one indicator (7)",
        ),
        (
            "second-order-over-two",
            "F1 =~ 1 + 6 + 11\nF2 =~ 2 + 7 + 12\nG =~ F1 + F2\n",
            "second-order factor G has only two indicators (F1, F2)",
        ),
        ("no-scale", "E =~ NA*1 + 6 + 11 + 2\n", "factor E has no scale"),
        ("lone-two-item-factor", "E =~ 1 + 6\n", "factor E has only two indicators"),
    ],
)
def test_fuzz_cfa_model_not_identified(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str, expect: str
) -> None:
    """No fit indices for a locally under-identified model: the reason, on the screen and in
    the JSON."""
    model = _model(tmp_path, text)
    args = ("--task", "bfi", "--responses", str(data), "--cfa-model", model)
    rep, screen = _json_and_screen(monkeypatch, *args)
    entry = rep["population"]["all"]["cfa_model"]
    assert entry["fit"] is None, (name, entry["fit"])
    assert entry["reason"].startswith("model not identified: ") and expect in entry["reason"]
    assert f"undefined (model not identified: {expect}" in screen


def test_identified_models_still_fit(data: Path, tmp_path: Path) -> None:
    """The rules do not refuse what is identified: a one-indicator factor with its residual
    fixed (df = 15 - 10: 8 for E, A's variance, their covariance), two two-item factors."""
    one = _model(tmp_path, "E =~ 1 + 6 + 11 + 2\nA =~ 7\n7 ~~ 0*7\n")
    fit = _analyze("--task", "bfi", "--responses", str(data), "--cfa-model", one)
    assert fit["population"]["all"]["cfa_model"]["fit"]["df"] == 5
    two = _model(tmp_path, "E =~ 1 + 6\nA =~ 2 + 7\n")
    fit = _analyze("--task", "bfi", "--responses", str(data), "--cfa-model", two)
    assert fit["population"]["all"]["cfa_model"]["fit"]["df"] == 1


def test_saturated_model_has_no_verdict(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three indicators, one factor: df 0, chi-square 0 and CFI 1 by construction; the caveat
    says so on the screen and in the JSON, and the report gives no "good"."""
    model = _model(tmp_path, "E =~ 1 + 6 + 11\n")
    args = ("--task", "bfi", "--responses", str(data), "--cfa-model", model)
    rep, screen = _json_and_screen(monkeypatch, *args)
    fit = rep["population"]["all"]["cfa_model"]["fit"]
    assert fit["df"] == 0 and fit["chisq"] == pytest.approx(0.0, abs=1e-6)
    assert fit["cfi"] == pytest.approx(1.0) and fit["caveat"] == SATURATED
    assert f"not a verdict: {SATURATED}" in screen
    from psymetrics_core.analysis.population.fitstats import FitIndices

    cells = _fit_cells(FitIndices(**fit), None)
    assert cells["caveat"] == SATURATED
    assert all(cells[k]["verdict"] == "" for k in ("cfi", "tli", "rmsea", "srmr", "pvalue"))


def test_no_structure_gives_no_good(tmp_path: Path) -> None:
    """Independent items (no covariance): RMSEA 0 would read "good"; the caveat replaces every
    verdict (the Jung example of docs/guides/populations.md)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((200, 6))
    s = np.cov(x.T, ddof=0)
    f = fit_indices(5.0, 9, baseline_chisq([s], [200]), 200, srmr_value=0.03)
    assert f.reason is not None and f.caveat is not None and f.caveat.startswith("no structure")
    cells = _fit_cells(f, None)
    assert cells["rmsea"]["text"] == "0.000" and cells["rmsea"]["verdict"] == ""
    assert all(cells[k]["cls"] == "" for k in ("cfi", "tli", "rmsea", "srmr", "pvalue"))


# -- grouping, clustering ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "args", "expect"),
    [
        ("group-item", ["--group", "item"], "--group item: the 'item' column"),
        ("group-response", ["--group", "response"], "--group response: the 'response' column"),
        ("group-respondent", ["--group", "respondent"], "--group respondent: the 'respondent'"),
        ("cluster-item", ["--cluster", "item"], "--cluster item: the 'item' column"),
    ],
)
def test_fuzz_grouping(data: Path, name: str, args: list[str], expect: str) -> None:
    """The file's own columns vary within a respondent: grouping or clustering by them would
    split each respondent (by answer value, for response)."""
    argv = ["analyze", "--task", "bfi", "--responses", str(data), *args]
    res = expect_clean_error(lambda: run_cli(argv), [args[0]], label=name)
    assert expect in res.message, res.message
    assert "respondent-level" in res.message


# -- EFA, criterion, acquiescence, constant items ------------------------------------------------


def test_efa_with_fewer_respondents_than_parameters(tmp_path: Path) -> None:
    """30 respondents, 12 items, 2 factors: 12*2 + 12 - 1 = 35 free parameters > 30."""
    path = _long(tmp_path / "few.csv", 30)
    rep = _analyze("--task", "bfi", "--responses", str(path), "--efa", "2")
    efa = rep["population"]["all"]["efa"]
    assert efa["loadings"] is None
    assert efa["reason"].startswith("30 complete respondents for 35 free parameters")
    one = _analyze("--task", "bfi", "--responses", str(path), "--efa", "1")["population"]
    assert one["all"]["efa"]["loadings"] is not None  # 12 + 12 = 24 <= 30: fitted


def test_constant_run_auc_is_null(tmp_path: Path) -> None:
    """Every respondent answers 3 to everything: no AUC (it would read 0.50, "no better than
    chance", about scores that cannot be ranked)."""

    def constant(frame: pd.DataFrame) -> pd.DataFrame:
        frame["response"] = 3
        return frame

    path = _long(tmp_path / "const.csv", 20, extra=constant)
    rep = _analyze("--task", "bfi", "--responses", str(path), "--criterion", "extraversion=flag")
    row = rep["population"]["all"]["criterion"][0]
    assert row["statistic"] == "auc" and row["value"] is None and row["ci95"] is None
    assert "the scores never vary" in row["reason"]


def test_criterion_total_on_the_composite_scale(tmp_path: Path) -> None:
    """asi lists hostile, benevolent and total (all 22 items): --criterion total=flag is a
    criterion row of the total (mean of the keyed items, as psym show asi says)."""
    items = [str(i) for i in range(1, 23)]
    path = _long(tmp_path / "asi.csv", 40, items=items, extra=_asi_codes)
    rep = _analyze("--task", "asi", "--responses", str(path), "--criterion", "total=flag")
    row = rep["population"]["all"]["criterion"][0]
    assert (row["scale"], row["label"], row["statistic"], row["n"]) == ("total", "flag", "auc", 40)
    assert row["value"] is not None


def _asi_codes(frame: pd.DataFrame) -> pd.DataFrame:
    frame["response"] = frame["response"] - 1  # asi answers 0-5
    return frame


def test_acquiescence_reason_only_when_null(data: Path) -> None:
    entry = _analyze("--task", "bfi", "--responses", str(data))["population"]["all"]
    assert entry["acquiescence"] is not None and entry["acquiescence_reason"] is None
    assert "acquiescence" not in entry["reasons"]


def test_constant_items_in_natural_order() -> None:
    """A run's answer matrix has its item columns in text order (pivot: 1, 10, 11, 2, ...);
    the items that never vary are listed as numbers sort."""
    rng = np.random.default_rng(0)
    cols = sorted(["1", "2", "9", "10", "11", "20"])  # text order, as the pivot gives
    frame = pd.DataFrame(rng.integers(1, 6, (8, len(cols))), columns=cols).astype(float)
    frame[["2", "10", "20", "9"]] = 3.0
    assert constant_items(frame) == ["2", "9", "10", "20"]


def test_third_party_warnings_are_held_back(tmp_path: Path) -> None:
    """Item 6 a copy of item 1: the covariance matrix is not positive definite. psym's reason
    names the dependent items; semopy's "not PD" log line and numpy's RuntimeWarnings must
    not reach the screen beside it (a real process: pytest would capture the warnings)."""

    def copy_item(frame: pd.DataFrame) -> pd.DataFrame:
        first = frame[frame["item"] == "1"].set_index("respondent")["response"]
        six = frame["item"] == "6"
        frame.loc[six, "response"] = frame.loc[six, "respondent"].map(first).to_numpy()
        frame.loc[frame["item"] == "2", "response"] = 4  # and a constant item
        return frame

    path = _long(tmp_path / "dep.csv", 60, extra=copy_item)
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "psymetrics_core",
            "analyze",
            "--task",
            "bfi",
            "--responses",
            str(path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert "dependent items: " in res.stdout and "items that never vary: 2" in res.stdout
    for noise in ("Warning", "not PD", "warnings.warn", "invalid value encountered"):
        assert noise not in res.stderr, res.stderr[-2000:]
