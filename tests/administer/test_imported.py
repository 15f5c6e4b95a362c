"""``psym import answers``: a ratings CSV becomes a run directory that analyses read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.analysis.records import load_run
from psymetrics_core.base.errors import PsymError
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
    assert {"role": "answers", "path": str(tmp_path / "answers.csv")}.items() <= next(
        f for f in results["provenance"]["files"] if f["role"] == "answers"
    ).items()
    # no model was asked: no distribution method is claimed (psym eval states one per mode);
    # pvq40 ships no item texts and needs none here (evaluate's kind asks no model)
    assert "distribution" not in results and results["design"] == "each"
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


def test_conditions_with_one_prompt_keep_their_own_answers(tmp_path: Path) -> None:
    # item-order-shuffle renders each item's prompt as original does: the cell, not the
    # prompt, says whose answer it is (a backend keyed by prompt text would mix them up)
    src = tmp_path / "same.csv"
    src.write_text(
        "respondent,item,response,condition\n"
        "a,1,4,original\na,1,2,item-order-shuffle\nb,1,6,original\nb,1,5,item-order-shuffle\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    argv = ["import", "answers", str(src), "--task", "pvq40", "--model", "m", "-o", str(out)]
    res = CliRunner().invoke(cli, argv)
    assert res.exit_code == 0, res.output
    runs = json.loads((out / "results.json").read_text())["tasks"]["pvq40"]["runs"]
    got = {(r["condition"], r["repeat"]): r["scales"]["self_direction"]["score"] for r in runs}
    assert got == {
        ("original", 0): 4,
        ("original", 1): 6,
        ("item-order-shuffle", 0): 2,
        ("item-order-shuffle", 1): 5,
    }


def test_two_names_of_one_condition_are_refused(tmp_path: Path) -> None:
    src = tmp_path / "twice.csv"
    src.write_text(
        "respondent,item,response,condition\n"
        "a,1,4,reversed-options\na,2,3,original+reversed-options\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    argv = ["import", "answers", str(src), "--task", "pvq40", "--model", "m", "-o", str(out)]
    res = CliRunner().invoke(cli, argv)
    assert res.exit_code == 1
    assert f"{src}, line 3, field 'condition'" in str(res.exception)
    assert not out.exists() or not (out / "results.json").exists()


def test_the_session_keeps_its_kinds(tmp_path: Path) -> None:
    from psymetrics_core.administer.imported import import_answers
    from psymetrics_core.pluginsys.session import Session

    session = Session()
    before = set(session.kinds())
    src = tmp_path / "a.csv"
    src.write_text(CSV, encoding="utf-8")
    import_answers(src, "pvq40", "m", tmp_path / "run", session=session)
    assert set(session.kinds()) == before  # the import's kind was registered for its run only
    # a run that fails inside evaluate (-o is a file) also leaves the session as it was
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(PsymError):
        import_answers(src, "pvq40", "m", tmp_path / "file", session=session)
    assert set(session.kinds()) == before
