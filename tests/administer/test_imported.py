"""``psym import answers``: a ratings CSV becomes a run directory that analyses read."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from psymetrics_core.analysis.records import load_run
from psymetrics_core.cli import cli

CSV = (
    "respondent,item,response,condition\n"
    "a,1,4,original\na,2,1,original\na,3,6,original\n"
    "a,1,3,reversed-options\na,2,,reversed-options\n"
    "b,1,2,original\n"
)


def _run(tmp_path: Path, *extra: str) -> tuple[Path, str]:
    src = tmp_path / "answers.csv"
    src.write_text(CSV, encoding="utf-8")
    out = tmp_path / "run"
    argv = ["import", "answers", str(src), "--task", "pvq40", "--model", "m", "-o", str(out)]
    res = CliRunner().invoke(cli, [*argv, *extra])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_import_writes_a_scored_run(tmp_path: Path) -> None:
    out, printed = _run(tmp_path)
    assert "6 row(s), 2 respondent(s) x 2 condition(s)" in printed
    results = json.loads((out / "results.json").read_text())
    entry = results["tasks"]["pvq40"]
    assert results["model"] == "m" and results["backend"]["name"] == "imported"
    assert results["provenance"]["files"]  # the CSV and the instrument, hashed
    runs = {(r["condition"], r["repeat"]): r for r in entry["runs"]}
    # a and b are repeats 0 and 1 (file order); b has no reversed-options rows: no such run
    assert set(runs) == {("original", 0), ("original", 1), ("reversed-options", 0)}
    assert runs[("reversed-options", 0)]["facets"] == {"option_order": "reversed-options"}
    # self_direction is items 1, 11, 22, 34: only item 1 answered -> its value, 1 of 4 items
    sd = runs[("original", 0)]["scales"]["self_direction"]
    assert (sd["score"], sd["n_answered"], sd["n_items"]) == (4, 1, 4)
    assert runs[("reversed-options", 0)]["scales"]["self_direction"]["score"] == 3
    # power (2, 17, 39): a left item 2 empty under reversed-options -> missing, not imputed
    assert runs[("reversed-options", 0)]["scales"]["power"]["score"] is None
    lines = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert len(lines) == 3 * 40
    empty = [x for x in lines if x["condition"] == "reversed-options" and x["item"] == "2"][0]
    assert empty["answer"] is None and empty["parse_status"] == "unparsed"
    assert empty["data"] == {"reason": "empty response in the imported file"}
    load_run(out)  # the reader of psym analyze takes it (records checked against the schema)


def test_condition_option_sets_every_row(tmp_path: Path) -> None:
    src = tmp_path / "x.csv"
    src.write_text("respondent,item,response\nm,1,5\n", encoding="utf-8")
    out = tmp_path / "run"
    argv = ["import", "answers", str(src), "--task", "pvq40", "--model", "m", "-o", str(out)]
    res = CliRunner().invoke(cli, [*argv, "--condition", "reversed-options"])
    assert res.exit_code == 0, res.output
    results = json.loads((out / "results.json").read_text())
    assert results["conditions"] == ["reversed-options"]


def test_an_existing_run_is_not_replaced(tmp_path: Path) -> None:
    out, _ = _run(tmp_path)
    before = (out / "results.json").read_bytes()
    src = tmp_path / "answers.csv"
    argv = ["import", "answers", str(src), "--task", "pvq40", "--model", "m", "-o", str(out)]
    res = CliRunner().invoke(cli, argv)
    assert res.exit_code == 1
    assert "already holds a run; pass --overwrite to replace it" in str(res.exception)
    assert (out / "results.json").read_bytes() == before


def test_analyze_reads_the_import(tmp_path: Path) -> None:
    out, _ = _run(tmp_path)
    res = CliRunner().invoke(cli, ["analyze", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert "pvq40" in res.output
