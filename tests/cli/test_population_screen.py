"""The screens of a population run (issue 25 newcomer trial): ``psym eval --population`` shows
the population's spread per scale, never respondent 1's scores as the run's, and points to
``psym analyze``; ``psym analyze`` says its per-cell tables are per cell and where to read the
population's spread, and caps the Rao et al. table like the other per-cell tables."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from binary_population import binary_bfi_run
from click.testing import CliRunner

from psymetrics_core.cli import cli
from psymetrics_core.records.population_summary import is_population_run, population_summary

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.latency_server import LatencyServer  # noqa: E402


def _by_extraversion(messages: list[dict[str, str]]) -> str:
    """ "5" to every item for an extroverted persona, "1" otherwise (as in test_population)."""
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    return "5" if "extroverted" in system else "1"


def test_population_screens(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The shared 32-persona run of ``tests/binary_population.py`` (the answers above, model m)."""
    run, screen = binary_bfi_run(tmp_path_factory)
    pop = run.parent / "big5.jsonl"
    out = screen
    assert f"population: {pop}  respondents: 32  template: jung" in out
    assert "bfi: scale scores across 32 respondents" in out
    # extraversion: 16 profiles at 3.5 (all 5s, 3 of 8 items reversed), 16 at 2.5; by hand:
    # mean 3.0, SD sqrt(32 * 0.5**2 / 31) = 0.508
    assert "│ extraversion      │ 1–5   │ 32 │ 3.00 │ 0.51 │ 2.50 │ 3.50 │" in out
    # straight-lining: every respondent answers one code throughout (share 1.0), all flagged
    assert "│ straight-lining │ 32 │ 1.00 │ 0.00 │ 1.00  │ 1.00 │ 32 of 32" in out
    assert "bfi: 32 of 32 respondents' answers flagged degenerate" in out
    assert "respondent=bin-00000" not in out and "vs Crowd" not in out  # not respondent 1's row
    assert f"next: psym analyze {run} (the population psychometrics), then psym report" in out
    # results.json's tasks.bfi is the population (runs[0] is the first cell, respondent 1)
    results = json.loads((run / "results.json").read_text())
    bfi = results["tasks"]["bfi"]
    assert (bfi["condition"], bfi["facets"]) == ("population", {})
    assert bfi["runs"][0]["condition"] == "respondent=bin-00000"
    assert bfi["scales"]["extraversion"]["score"] == 3.0  # the mean below, not 2.5 or 3.5
    # ... and records the population entry the screen printed (one group: no other condition)
    (group,) = results["tasks"]["bfi"]["population"]
    assert (group["group"], group["n_respondents"], group["n_degenerate"]) == ("", 32, 32)
    extra = group["scales"]["extraversion"]
    assert (extra["n"], extra["mean"], extra["min"], extra["max"]) == (32, 3.0, 2.5, 3.5)
    assert extra["sd"] == pytest.approx(math.sqrt(32 * 0.5**2 / 31))
    assert group["indicators"]["straight_lining"]["n_fired"] == 32
    res = CliRunner().invoke(cli, ["analyze", str(run)], terminal_width=400)
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())  # (rich wraps the notes)
    assert "that section, at the end, treats the respondents as people" in out
    assert "use --repeats" not in out
    assert "read the population section's variance ratios" in out
    assert "Rao et al. (2023) metrics" in out and "... 11 more rows (all in --json)" in out


def test_population_summary_by_hand() -> None:
    def run(rid: str, score: float | None, fired: bool = False, other: str = "") -> dict:
        facets = {"respondent": f"respondent={rid}", **({"persona": other} if other else {})}
        return {
            "facets": facets,
            "scales": {"x": {"score": score}},
            "indicators": {"straight_lining": {"fired": fired}},
        }

    runs = [
        run("a", 1.0, True),
        run("b", 2.0),
        run("c", 4.0),
        run("d", None),
        run("a", 5.0, other="persona=p"),
    ]
    results = {"tasks": {"t": {"scales": {}, "runs": runs}}}
    assert is_population_run(results)
    plain, other = population_summary(results)
    assert (plain.group, plain.n_cells, plain.n_degenerate) == ("", 4, 1)
    x = plain.scales[0]
    # by hand: mean 7/3, deviations -4/3, -1/3, 5/3: SD sqrt((16 + 1 + 25) / 9 / 2) = sqrt(7/3)
    assert (x.n, x.min, x.max) == (3, 1.0, 4.0)
    assert x.mean == pytest.approx(7 / 3) and x.sd == pytest.approx(math.sqrt(7 / 3))
    assert other.group == "persona=p" and other.scales[0].sd is None
    assert other.scales[0].reason == "one score: no SD"
    assert not is_population_run({"tasks": {"t": {"scales": {}, "runs": [{"facets": {}}]}}})


def test_criterion_help_names_only_options_the_command_has() -> None:
    """``psym report`` has no --responses: its --criterion help does not mention it."""
    report = " ".join(CliRunner().invoke(cli, ["report", "--help"]).output.split())
    analyze = " ".join(CliRunner().invoke(cli, ["analyze", "--help"]).output.split())
    assert "--criterion SCALE=FIELD Population runs: criterion validity" in report
    assert "--responses" not in report
    assert "with --responses, the labels are the file's columns constant" in analyze


def test_sample_and_repeats_on_the_population_screen(tmp_path: Path) -> None:
    pop = tmp_path / "big5.jsonl"
    CliRunner().invoke(cli, ["population", "build", "--generate", "binary", "-o", str(pop)])
    with LatencyServer(latency=0.0, answer=_by_extraversion) as srv:
        url = f"base_url={srv.base_url},model=m"
        args = [
            "eval",
            "--tasks",
            "bfi",
            "--population",
            str(pop),
            "--sample",
            "4",
            "--repeats",
            "2",
            "--temperature",
            "0.7",
            "--limit",
            "2",
            "--model",
            "openai-chat",
            "--model-args",
            url,
            "-o",
            str(tmp_path / "r"),
        ]
        res = CliRunner().invoke(cli, args, terminal_width=200)
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"population: {pop} respondents: 4 template: jung, --sample 4" in out
    assert "bfi: scale scores across 4 respondents (8 administrations)" in out
    assert "bfi: 0 of 8 administrations' answers flagged degenerate" in out
    assert "* bfi.openness: no respondent has a score" in out  # --limit 2: items 1 and 2 only
