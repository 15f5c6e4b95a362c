"""The worked example of docs/guides/divergence.md: Song et al.'s (2025) published results for
Qwen2.5-7B-Instruct (tests/data/song2025, CC BY 4.0), brought in as runs the way a user would
(``psym import answers`` for the four questionnaires, ``psym import logprobs`` for the 520
per-pair log-probabilities of Value Portrait) and compared by the divergence analysis, reproduce
their published rho within 1e-3. The expected values are theirs, not ours:
results/RQ1/analysis.json (0.451228, 0.410391, 0.460166, the BFI-44 vs BFI-10 baseline
0.917663) and RQ1/length_norm/report_data.json (the per-pair length choice: sum 0.402224 for
PVQ-21 and 0.67082 for BFI-10; per-token mean -0.268298, -0.149212, 0.820783, 0.894427).
Their per-construct profile (ecological_profiles/Qwen2.5-7B-Instruct.json) is the independent
check that the imported pairs go through the same profile rule (tags >= 0.3, mean over
scenarios of the mean over tagged responses).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.analysis.divergence import (
    PairResult,
    Profile,
    divergence_of,
    load_constructs,
    profiles_of,
)
from psymetrics_core.cli import cli

DATA = Path(__file__).parents[1] / "data" / "song2025"
MODEL = "Qwen2.5-7B-Instruct"
FORMS = ("pvq40", "pvq21", "bfi", "bfi10")


def _psym(*argv: str) -> None:
    res = CliRunner().invoke(cli, list(argv))
    assert res.exit_code == 0, res.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("song")
    out = {}
    for task in FORMS:
        out[task] = tmp / task
        csv_path = str(DATA / f"{task}.csv")
        _psym("import", "answers", csv_path, "--task", task, "--model", MODEL, "-o", str(out[task]))
    pairs = str(DATA / "genprob_pairs.csv")
    vp = ("import", "logprobs", pairs, "--task", "value-portrait", "--model", MODEL)
    out["vp"] = tmp / "vp"
    _psym(*vp, "-o", str(out["vp"]))
    out["vp-mean"] = tmp / "vp-mean"
    _psym(*vp, "--task-arg", "value-portrait.length=mean", "-o", str(out["vp-mean"]))
    return out


def _profile(run: Path, family: str) -> Profile:
    found = [p for p in profiles_of([run], load_constructs()) if p.family == family]
    assert len(found) == 1
    return found[0]


def _pair(runs: dict[str, Path], a: str, b: str, family: str) -> PairResult:
    """The pair of the two runs' profiles of ``family`` as the divergence section makes it."""
    (pair,) = divergence_of([_profile(runs[a], family), _profile(runs[b], family)]).pairs
    return pair


def test_the_pairs_are_their_520_ids_and_give_their_published_profile(
    runs: dict[str, Path],
) -> None:
    with (DATA / "genprob_pairs.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len({(r["scenario"], r["response"]) for r in rows}) == len(rows) == 520
    # every id is one of the plugin's (the import refuses others) and every scenario is covered
    entry = json.loads((runs["vp"] / "results.json").read_text())["tasks"]["value-portrait"]
    assert entry["n_items"] == entry["n_answered"] == 104
    with (DATA / "genprob_profile.csv").open(encoding="utf-8") as fh:
        published = {r["construct"]: float(r["logprob"]) for r in csv.DictReader(fh)}
    got: dict[str, float] = {}
    for family in ("basic_values", "higher_order_values", "big_five"):
        got.update(_profile(runs["vp"], family).scores)
    assert set(got) == set(published)  # the 19 constructs
    for construct, value in published.items():
        # their profile is printed to 6 decimals
        assert got[construct] == pytest.approx(value, abs=2e-6), construct


def test_pvq40_profile_is_the_mean_of_both_option_orders(runs: dict[str, Path]) -> None:
    p = _profile(runs["pvq40"], "basic_values")
    assert p.n_administrations == 2
    # Song et al.'s combined construct averages (their PVQ file, rounded to 4 places)
    assert p.scores["achievement"] == pytest.approx(1.375)
    assert p.scores["universalism"] == pytest.approx(2.6667, abs=1e-4)
    assert p.scores["security"] == pytest.approx(1.3)


def test_rho_pvq40_genprob(runs: dict[str, Path]) -> None:
    pair = _pair(runs, "pvq40", "vp", "basic_values")
    assert pair.kind == "cross-method"
    assert pair.rho.rho == pytest.approx(0.451228, abs=1e-3)
    assert pair.rho.p_method == "10000 seeded draws"


def test_rho_bfi44_genprob(runs: dict[str, Path]) -> None:
    pair = _pair(runs, "bfi", "vp", "big_five")
    assert pair.rho.rho == pytest.approx(0.410391, abs=1e-3)
    assert pair.rho.p_method == "exact (120 orders)"
    assert pair.rho.p == pytest.approx(0.5, abs=1e-9)  # Song et al.: p_two_sided 0.5


def test_rho_pvq40_pvq21_within_method(runs: dict[str, Path]) -> None:
    pair = _pair(runs, "pvq40", "pvq21", "basic_values")
    assert pair.kind == "within-method"
    assert pair.rho.rho == pytest.approx(0.460166, abs=1e-3)


def test_rho_bfi44_bfi10_within_method(runs: dict[str, Path]) -> None:
    pair = _pair(runs, "bfi", "bfi10", "big_five")
    assert pair.kind == "within-method"
    assert pair.rho.rho == pytest.approx(0.917663, abs=1e-3)  # Song et al.'s baseline


@pytest.mark.parametrize(
    ("form", "family", "run", "theirs"),
    [
        ("pvq21", "basic_values", "vp", 0.402224),
        ("bfi10", "big_five", "vp", 0.67082),
        ("pvq40", "basic_values", "vp-mean", -0.268298),
        ("pvq21", "basic_values", "vp-mean", -0.149212),
        ("bfi", "big_five", "vp-mean", 0.820783),
        ("bfi10", "big_five", "vp-mean", 0.894427),
    ],
)
def test_the_length_choice_gives_their_per_token_rho(
    runs: dict[str, Path], form: str, family: str, run: str, theirs: float
) -> None:
    """Song et al.'s appendix: the per-token mean flips the values' rho from 0.45 to -0.27."""
    assert _pair(runs, form, run, family).rho.rho == pytest.approx(theirs, abs=1e-3)
