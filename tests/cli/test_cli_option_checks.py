"""Command-line values that cannot work are refused in one line before anything runs:
``--data`` no selected task takes, unusable ``--label`` names, and counts or lengths of 0 or
less (``--judge-max-new-tokens``, ``--limit``, ``--repeats``, ``--max-new-tokens``,
``--fence-k``). Each is run through the real ``psym`` entry point (in-process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import main


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 1) -> str:
    """Run ``psym ARGV``; assert exit ``code`` without a traceback; return the error line."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    lines = [x for x in captured.err.splitlines() if x.startswith(("psym: error:", "Error:"))]
    assert len(lines) == 1, captured.err
    return lines[0]


# -- --data ------------------------------------------------------------------------------------


def test_data_no_selected_task_takes_is_refused(tmp_path: Path, capsys) -> None:
    line = _fails(
        ["eval", "--tasks", "bfi,mfq", "--data", "t.csv", "--output", str(tmp_path / "run")], capsys
    )
    assert line == (
        "psym: error: --data t.csv: none of the selected tasks (bfi, mfq) takes a data file "
        "(tasks that do: housing, moral-advice)"
    )
    assert not (tmp_path / "run").exists()  # refused before the run directory was claimed


def test_data_for_an_unselected_task_is_refused(tmp_path: Path, capsys) -> None:
    line = _fails(
        [
            "eval",
            "--tasks",
            "bfi,housing",
            "--data",
            "moral-advice=d.csv",
            "--output",
            str(tmp_path / "run"),
        ],
        capsys,
    )
    assert "--data moral-advice=d.csv: task 'moral-advice' is not among" in line


@pytest.mark.parametrize(
    "command", [["score", "--task", "bfi", "--responses", "r.csv"], ["show", "bfi"]]
)
def test_data_is_checked_by_every_command_that_takes_it(command: list[str], capsys) -> None:
    line = _fails([*command, "--data", "t.csv"], capsys)
    assert "--data t.csv: none of the selected tasks (bfi) takes a data file" in line


def test_data_reaching_a_task_is_kept(fresh_plugins) -> None:
    from psymetrics_core.administer.options import parse_task_args

    kw = {"session": fresh_plugins}
    assert parse_task_args([], ["bfi", "housing"], ["t.csv"], **kw) == {"*": {"data": "t.csv"}}
    want = {"housing": {"data": "t.csv"}}
    assert parse_task_args([], ["housing"], ["housing=t.csv"], **kw) == want
    # an unknown task id is left to the run's own message (a close-match hint)
    assert parse_task_args([], ["bfj"], ["t.csv"], **kw) == {"*": {"data": "t.csv"}}


# -- --label -----------------------------------------------------------------------------------

BAD_LABELS = [
    ("", "empty"),
    ("   ", "empty"),
    ("runs/a", "path separator"),
    ("runs\\a", "path separator"),
    ("a\tb", "control"),
    ("a\nb", "control"),
    ("a\x1b[31mb", "control"),
    ("a\u2028b", "control"),
    ("evil\u202eftp", "control"),
    ("x" * 201, "at most 200"),
]


@pytest.mark.parametrize("label, why", BAD_LABELS, ids=[str(i) for i in range(len(BAD_LABELS))])
def test_unusable_labels_are_refused(tmp_path: Path, capsys, label: str, why: str) -> None:
    run = tmp_path / "run"
    line = _fails(["eval", "--tasks", "bfi", "--label", label, "--output", str(run)], capsys)
    assert line.startswith("psym: error: --label") and why in line, line
    assert not run.exists()
    line = _fails(["report", str(tmp_path), "--label", label], capsys)
    assert line.startswith("psym: error: --label") and why in line, line


def test_usable_labels_pass_stripped() -> None:
    from psymetrics_core.administer.preflight import check_label

    assert check_label("  SmolLM2 135M (q8, 2024-11)  ") == "SmolLM2 135M (q8, 2024-11)"
    assert check_label("modèle·α") == "modèle·α"
    with pytest.raises(PsymError, match="--label"):
        check_label("a/b")


# -- counts and lengths --------------------------------------------------------------------------

RANGES = [
    (
        ["score", "--task", "bfi", "--responses", "r.csv", "--judge-max-new-tokens", "0"],
        "--judge-max-new-tokens",
    ),
    (
        ["score", "--task", "bfi", "--responses", "r.csv", "--judge-max-new-tokens", "-5"],
        "--judge-max-new-tokens",
    ),
    (["eval", "--tasks", "bfi", "--judge-max-new-tokens", "0"], "--judge-max-new-tokens"),
    (["eval", "--tasks", "bfi", "--max-new-tokens", "-1"], "--max-new-tokens"),
    (["eval", "--tasks", "bfi", "--limit", "0"], "--limit"),
    (["eval", "--tasks", "bfi", "--repeats", "0"], "--repeats"),
    (["plan", "--tasks", "bfi", "--repeats", "-2", "-o", "p.jsonl"], "--repeats"),
    (["analyze", ".", "--fence-k", "-1"], "--fence-k"),
    (["analyze", ".", "--fence-k", "nan"], "--fence-k"),
    (["analyze", ".", "--fence-k", "inf"], "--fence-k"),
]


@pytest.mark.parametrize("argv, option", RANGES, ids=[" ".join(a) for a, _ in RANGES])
def test_counts_of_zero_or_less_are_refused(argv: list[str], option: str, capsys) -> None:
    # one line naming the option and its bound (psymetrics_core/base/bounds.py, issue 24)
    line = _fails(argv, capsys)
    assert line.startswith(f"psym: error: {option} must be "), line
    assert " in " in line and ", got " in line, line


def test_library_shared_option_no_task_takes_is_refused(tmp_path: Path) -> None:
    """``evaluate(task_options={"*": ...})``, the library form of ``--data`` without a task."""
    from psymetrics_core import evaluate

    with pytest.raises(PsymError) as info:
        evaluate(["bfi", "mfq"], task_options={"*": {"data": "t.csv"}}, output=tmp_path / "run")
    assert str(info.value) == (
        "task option 'data' (for every task, '*'): none of the tasks (bfi, mfq) takes it"
    )
    assert not (tmp_path / "run").exists()
