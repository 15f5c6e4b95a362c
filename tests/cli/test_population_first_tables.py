"""A population run's first tables are the population's (issue 31, items 1-3): ``psym eval``,
``psym report``'s score and validity tables and ``psym export population`` show each scale's
mean, SD and n across respondents (the numbers results.json records in
``tasks.<task>.population``), never respondent 1's values unlabelled; the report carries the
terminal's trust cues (ranges, ``!`` marks, the degenerate-profile sentence, degenerate profiles
drawn apart, captions only for what is drawn, one line for an empty section)."""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from pathlib import Path

import pytest
from behaviour_fakes import ScriptedBackend
from binary_population import binary_bfi_run
from click.testing import CliRunner

from psymetrics_core.administer.runner import evaluate
from psymetrics_core.cli import cli
from psymetrics_core.instruments.indicators import degenerate_sentence
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.report import build_report, load_runs_for_report

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.latency_server import LatencyServer  # noqa: E402


@pytest.fixture(scope="module")
def population_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """32 binary Big Five personas x BFI-44 (a persona-driven fake server): the run and the
    ``psym eval`` screen (shared: ``tests/binary_population.py``)."""
    return binary_bfi_run(tmp_path_factory)


def _scores_table(html: str) -> str:
    start = html.index('<table class="scores">')
    return html[start : html.index("</table>", start)]


def test_report_first_table_is_the_screen_population(population_run: tuple[Path, str]) -> None:
    run, screen = population_run
    results = json.loads((run / "results.json").read_text())
    (group,) = results["tasks"]["bfi"]["population"]
    first = results["tasks"]["bfi"]["runs"][0]["scales"]  # respondent bin-00000's cell
    entry = results["tasks"]["bfi"]["scales"]  # the population's means, not that cell
    assert {k: v["score"] for k, v in entry.items()} == {
        k: v["mean"] for k, v in group["scales"].items()
    }
    html = build_report(load_runs_for_report([run]), Session())
    table = _scores_table(html)
    assert "population: mean ± SD · n respondents · min–max" in table
    for scale, s in group["scales"].items():
        cell = re.search(
            rf'data-scale="{scale}" data-group="" data-value="([^"]*)"[^>]*>([^<]*)<', table
        )
        assert cell, scale
        assert float(cell.group(1)) == s["mean"]
        # the same number as the terminal's row: "│ scale │ range │ n │ mean │ ..."
        row = next(x for x in screen.splitlines() if re.match(rf"│ {scale}\s+│", x))
        assert f"│ {cell.group(2)} │" in row, (row, cell.group(2))
    # extraversion: 16 personas at 3.5, 16 at 2.5 (by hand): mean 3.0, SD sqrt(32 * .25 / 31)
    assert "3.00</span>" in table and f"± {math.sqrt(32 * 0.25 / 31):.2f} · n 32" in table
    assert first["extraversion"]["score"] in (2.5, 3.5)  # respondent 1 differs from the mean
    assert f'data-value="{first["extraversion"]["score"]}"' not in table
    # every persona answers one code throughout: all flagged, marked and explained
    assert table.count("""title="every respondent's answer pattern is degenerate">!</b>""") == 5
    assert "bfi: 32 of 32 respondents&#39; answers flagged degenerate" in html
    assert "validity indicators across" not in html  # (the terminal's table title)
    validity = html[html.index('<table class="indicators">') :]
    validity = validity[: validity.index("</table>")]
    assert "m (population: 32 respondents)" in validity
    assert "1.00 (1.00–1.00); 32 of 32 beyond" in validity  # straight-lining share 1.0 each


def test_export_population_by_hand(population_run: tuple[Path, str], tmp_path: Path) -> None:
    run, _ = population_run
    res = CliRunner().invoke(cli, ["export", "population", str(run), "-o", str(tmp_path / "p.csv")])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader((tmp_path / "p.csv").open(encoding="utf-8")))
    ext = next(r for r in rows if r["kind"] == "scale" and r["name"] == "extraversion")
    assert (ext["n"], ext["n_respondents"], ext["n_degenerate"]) == ("32", "32", "32")
    assert float(ext["mean"]) == 3.0 and float(ext["sd"]) == pytest.approx(math.sqrt(8 / 31))
    assert (float(ext["range_low"]), float(ext["range_high"])) == (1.0, 5.0)
    sl = next(r for r in rows if r["name"] == "straight_lining")
    assert (sl["kind"], sl["n_fired"], float(sl["mean"])) == ("indicator", "32", 1.0)
    res = CliRunner().invoke(cli, ["export", "scores", str(run), "-o", str(tmp_path / "s.csv")])
    assert res.exit_code == 0, res.output
    scores = list(csv.DictReader((tmp_path / "s.csv").open(encoding="utf-8")))
    assert len({r["respondent"] for r in scores}) == 32  # each row names its respondent
    assert scores[0]["respondent"] == "bin-00000" and scores[0]["range_high"] == "5.0"


def test_export_population_of_a_single_model_run_is_one_line(tmp_path: Path) -> None:
    one = tmp_path / "one"
    backend = ScriptedBackend(lambda _: "3")
    evaluate(["bfi"], backend=backend, output=one, limit=3, session=Session())
    res = CliRunner().invoke(
        cli, ["export", "population", str(tmp_path / "one"), "-o", str(tmp_path / "p.csv")]
    )
    assert res.exit_code == 1 and "no population run among the run directories" in str(
        res.exception
    )
    assert not (tmp_path / "p.csv").exists()
    results = json.loads((tmp_path / "one" / "results.json").read_text())
    assert "population" not in results["tasks"]["bfi"]  # single-model records are unchanged


def test_report_trust_cues_of_a_single_model(tmp_path: Path) -> None:
    """A straight-lined BFI (every answer 1) and a varied MFQ (no human norms)."""
    session = Session()
    flat, mfq = tmp_path / "flat", tmp_path / "mfq"
    evaluate(["bfi"], backend=ScriptedBackend(lambda _: "1"), output=flat, session=session)
    answers = iter("0123450123450123450123450123450123")
    evaluate(["mfq"], backend=ScriptedBackend(lambda _: next(answers)), output=mfq, session=session)
    html = build_report(load_runs_for_report([flat, mfq]), session)
    table = _scores_table(html)
    # the range column (BFI answers 1-5; MFQ relevance/judgement 0-5) and the ! marks
    assert re.search(r"<td>extraversion</td><td class=\"dim\">1–5</td>", table)
    assert re.search(r"<td>care</td><td class=\"dim\">0–5</td>", table)
    assert table.count('title="degenerate answer pattern">!</b>') == 5  # BFI's five scales
    assert "flat · " + degenerate_sentence("bfi", "the validity indicators below") in html
    # the profile: the flagged run drawn apart and named in the caption; no band without norms
    figs = re.findall(r"<figcaption>(.*?)</figcaption>", html, re.S)
    bfi = next(f for f in figs if f.startswith("bfi: each model"))
    mfq_cap = next(f for f in figs if f.startswith("mfq: each model"))
    assert "Grey hatched squares: flat" in bfi and "Grey band" in bfi
    assert "Grey band" not in mfq_cap and "no band is drawn" in mfq_cap
    assert "Grey hatched" not in mfq_cap
    # empty sections say what would fill them
    assert "No conditions to compare: run with <code>--condition NAME</code>" in html
    assert "No behaviour tasks: run one" in html
    assert html.count("to fill this section") >= 4  # conditions, behaviour, two panels


def test_16p_range_on_the_eval_screen(tmp_path: Path) -> None:
    with LatencyServer(latency=0.0) as srv:
        args = [
            "eval",
            "--tasks",
            "16p",
            "--limit",
            "20",
            "--model",
            "openai-chat",
            "--model-args",
            f"base_url={srv.base_url},model=m",
            "-o",
            str(tmp_path / "r"),
        ]
        res = CliRunner().invoke(cli, args, terminal_width=200)
    assert res.exit_code == 0, res.output
    assert res.output.count("(0–100)") == 5 and "(1–7)" not in res.output
