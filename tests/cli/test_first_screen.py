"""The first screen of ``psym eval`` explains itself (issue 26, item 5): the scale range beside
each score, the norm group named in full with its source and size, no interval column when no
score has an interval, "no human norms" where an instrument has none, scores of a profile whose
answer pattern is degenerate marked in the table itself, and the next command to run."""

from __future__ import annotations

import sys
from pathlib import Path

from behaviour_fakes import ScriptedBackend
from click.testing import CliRunner

from psymetrics_core.administer.ranges import range_text, scale_ranges
from psymetrics_core.administer.runner import evaluate
from psymetrics_core.cli import cli
from psymetrics_core.cli.console import stdout
from psymetrics_core.cli.eval_table import print_table as _print_table
from psymetrics_core.pluginsys.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.latency_server import LatencyServer  # noqa: E402


def test_eval_screen_against_a_server(tmp_path: Path) -> None:
    with LatencyServer(latency=0.0) as srv:
        args = [
            "eval",
            "--tasks",
            "bfi,mfq",
            "--model",
            "openai-chat",
            "--model-args",
            f"base_url={srv.base_url},model=m",
            "--output",
            str(tmp_path / "run"),
        ]
        res = CliRunner().invoke(cli, args, terminal_width=200)
    assert res.exit_code == 0, res.output
    out = res.output
    assert "2." in out and "(1–5)" in out  # BFI-44: mean of items answered 1-5
    assert "(0–5)" in out  # MFQ-30: mean of items rated 0-5
    assert "vs Crowd" in out
    assert 'human norm bfi "Crowd": Srivastava, John, Gosling & Potter (2003)' in out
    assert "(n = 6,076)" in out
    assert "no human norms" in out  # the MFQ ships none
    assert "95% CI" not in out  # no score has an interval
    assert f"next: psym report {tmp_path / 'run'} -o report.html" in out


def test_degenerate_profile_marked_in_the_table(tmp_path: Path) -> None:
    session = Session()
    results = evaluate(
        ["bfi"], backend=ScriptedBackend(lambda _: "1"), session=session, output=tmp_path / "run"
    )
    with stdout.capture() as cap:
        _print_table(results, session)
    text = cap.get()
    rows = [line for line in text.splitlines() if "(1–5)" in line]
    assert len(rows) == 5 and all("!" in row for row in rows), text
    assert "bfi: the answer pattern is degenerate" in text


def test_scale_ranges_sum_and_mean() -> None:
    """A sum scale spans n_items x the response range (PsychoBench's BDI-II: 21 items, 0-3)."""
    session = Session()
    tasks = {"bfi": {"scales": {"openness": {}}}, "bdi2": {"scales": {"depression": {}}}}
    results = {"tasks": tasks}
    ranges = scale_ranges(results, session)
    assert range_text(ranges["bfi", "openness"]) == "1–5"
    inst = session.get_instrument("bdi2")
    assert inst.scales["depression"].method == "sum"
    assert range_text(ranges["bdi2", "depression"]) == "0–63"  # 21 items x 0-3, by hand


def test_no_answer_parsed_says_so_not_degenerate(tmp_path: Path) -> None:
    """Every answer unparseable (the pb-gse runs of the Huang et al., 2024 page): no pattern to
    describe, every score undefined; the screen and the report say that no answer parsed."""
    from psymetrics_core.instruments.indicators import degenerate_sentence
    from psymetrics_core.report import build_report, load_runs_for_report

    session = Session()
    backend = ScriptedBackend(lambda _: "no idea")
    results = evaluate(["bfi"], backend=backend, session=session, output=tmp_path / "run")
    assert results["tasks"]["bfi"]["n_answered"] == 0
    with stdout.capture() as cap:
        _print_table(results, session)
    text = " ".join(cap.get().split())
    assert "bfi: no answer parsed" in text, text
    assert "degenerate" not in text and "describe that pattern" not in text
    html = build_report(load_runs_for_report([tmp_path / "run"]), session)
    assert degenerate_sentence("bfi", "the validity indicators below", n_answered=0) in html
    assert "describe that pattern" not in html


def test_indicator_title_fits_the_narrowest_table() -> None:
    """sct's screen (Wang et al., 2026 page): one task, one indicator (the judge parse rate);
    the title stays one line at 80 columns and the legend follows the table."""
    from psymetrics_core.cli.eval_table import _print_indicators
    from psymetrics_core.instruments.indicators import judge_parse_rate

    results = {"tasks": {"sct": {"indicators": {"judge_parse_rate": judge_parse_rate(0, 2)}}}}
    with stdout.capture() as cap:
        _print_indicators(results)
    lines = [line.rstrip() for line in cap.get().splitlines()]
    assert lines[0] == "validity indicators", lines
    assert lines[1].startswith("┏") and len(lines[1]) < 80
    assert "! = beyond its threshold (docs: guides/report.md)" in lines


def test_no_score_computed_says_so_not_degenerate() -> None:
    """sct with no judge verdict parsed: answers parsed, every score undefined."""
    from psymetrics_core.instruments.indicators import degenerate_sentence, n_scored

    entry = {"n_answered": 2, "scales": {"CA": {"score": None}, "ER": {"score": None}}}
    text = degenerate_sentence("sct", n_answered=2, n_scored=n_scored(entry))
    assert text.startswith("sct: no score could be computed from the answers")
    assert "degenerate" not in text
    entry["scales"]["CA"]["score"] = 2.5
    assert "degenerate" in degenerate_sentence("sct", n_scored=n_scored(entry))


def test_multi_cell_first_table_is_labelled(tmp_path: Path) -> None:
    """Several condition levels, no population: the first table is the first cell's scores
    and says so, naming the level (as the report's first column does)."""
    session = Session()
    conditions = ["original", "reversed-options"]
    backend = ScriptedBackend(lambda _: "3")
    out = tmp_path / "run"
    results = evaluate(["bfi"], backend=backend, session=session, output=out, conditions=conditions)
    with stdout.capture() as cap:
        _print_table(results, session)
    text = cap.get()
    first = text.splitlines()[0]
    assert first.startswith("scores of the first run: condition original, seed 1234 (of 2 runs"), (
        text
    )
    assert "┃ reversed-options ┃" in text  # the per-run table names the level whole
