"""The worked example of docs/guides/divergence.md: Song et al.'s (2025) per-item answers of
Qwen2.5-7B-Instruct (tests/data/song2025, CC BY 4.0), imported with ``psym import answers`` and
compared by the divergence analysis, reproduce their published rho within 1e-3
(results/RQ1/analysis.json: 0.451228, 0.410391, 0.460166; and the BFI-44 vs BFI-10
baseline 0.917663 once the short forms are installed).

The generation-probability side is their published per-construct profile
(ecological_profiles/Qwen2.5-7B-Instruct.json), read as a profile; ``psym import logprobs``
(the value-portrait plugin) will compute it from the per-pair log-probabilities.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.analysis.divergence import (
    Profile,
    compare,
    divergence,
    load_constructs,
    profiles_of,
)
from psymetrics_core.cli import cli
from psymetrics_core.pluginsys.session import Session

DATA = Path(__file__).parents[1] / "data" / "song2025"
MODEL = "Qwen2.5-7B-Instruct"


def _import(tmp: Path, task: str, csv_name: str | None = None) -> Path:
    out = tmp / task
    argv = ["import", "answers", str(DATA / f"{csv_name or task}.csv"), "--task", task]
    res = CliRunner().invoke(cli, [*argv, "--model", MODEL, "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("song")
    out = {"pvq40": _import(tmp, "pvq40"), "bfi": _import(tmp, "bfi")}
    installed = Session().instruments()
    for form in ("pvq21", "bfi10"):  # the short forms of psymetrics-plugin-pvq and -bfi
        if form in installed:
            out[form] = _import(tmp, form)
    return out


def _genprob(family: str) -> Profile:
    table = load_constructs().families[family]
    with (DATA / "genprob_profile.csv").open(encoding="utf-8") as fh:
        values = {r["construct"]: float(r["logprob"]) for r in csv.DictReader(fh)}
    scores = {c: values[c] for c in table}
    return Profile(MODEL, "generation-probability", "value-portrait", family, scores, 1, 0, "")


def _profile(run: Path, family: str) -> Profile:
    found = [p for p in profiles_of([run], load_constructs()) if p.family == family]
    assert len(found) == 1
    return found[0]


def test_pvq40_profile_is_the_mean_of_both_option_orders(runs: dict[str, Path]) -> None:
    p = _profile(runs["pvq40"], "basic_values")
    assert p.n_administrations == 2
    # Song et al.'s combined construct averages (their PVQ file, rounded to 4 places)
    assert p.scores["achievement"] == pytest.approx(1.375)
    assert p.scores["universalism"] == pytest.approx(2.6667, abs=1e-4)
    assert p.scores["security"] == pytest.approx(1.3)


def test_rho_pvq40_genprob(runs: dict[str, Path]) -> None:
    pair = compare(_profile(runs["pvq40"], "basic_values"), _genprob("basic_values"))
    assert pair.kind == "cross-method"
    assert pair.rho.rho == pytest.approx(0.451228, abs=1e-3)
    assert pair.rho.p_method == "10000 seeded draws"


def test_rho_bfi44_genprob(runs: dict[str, Path]) -> None:
    pair = compare(_profile(runs["bfi"], "big_five"), _genprob("big_five"))
    assert pair.rho.rho == pytest.approx(0.410391, abs=1e-3)
    assert pair.rho.p_method == "exact (120 orders)"
    assert pair.rho.p == pytest.approx(0.5, abs=1e-9)  # Song et al.: p_two_sided 0.5


def test_rho_pvq40_pvq21_within_method(runs: dict[str, Path]) -> None:
    if "pvq21" not in runs:
        pytest.skip("the pvq21 instrument is not installed (psymetrics-plugin-pvq)")
    result = divergence([runs["pvq40"], runs["pvq21"]])
    pairs = [p for p in result.pairs if p.family == "basic_values"]
    assert len(pairs) == 1 and pairs[0].kind == "within-method"
    assert pairs[0].rho.rho == pytest.approx(0.460166, abs=1e-3)


def test_rho_bfi44_bfi10_within_method(runs: dict[str, Path]) -> None:
    if "bfi10" not in runs:
        pytest.skip("the bfi10 instrument is not installed (psymetrics-plugin-bfi)")
    (pair,) = divergence([runs["bfi"], runs["bfi10"]]).pairs
    assert pair.kind == "within-method"
    assert pair.rho.rho == pytest.approx(0.917663, abs=1e-3)  # Song et al.'s baseline
