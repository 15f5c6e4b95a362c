"""Fuzz suite, run directories: ``psym report`` and ``psym export scores|samples|judge`` given a
damaged run (truncated, hand-edited, binary or deeply nested ``results.json``,
``samples.jsonl``, ``judge.jsonl`` or panel file).

They read runs through the one run reader (``psymetrics_core.records.read``, as ``psym analyze``
does), so every case of ``cases.RUN_FILES_RAW`` must end in one ``PsymError`` line naming the
file and the field or line (``harness.expect_clean_error``), and through the real command line
in one ``psym: error:`` line with a non-zero exit, no traceback and no file written.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from cases_runfiles import RUN_FILES_RAW
from harness import expect_clean_error, shared_session

from psymetrics_core.base.types import Completion


class _Scripted:
    """Answers the i-th prompt with ``answers[i % len]`` (a fake model, unit tests only)."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.i = 0

    def generate(self, prompts: Any, settings: Any, reporter: Any = None) -> list[Completion]:
        out = []
        for _ in prompts:
            out.append(Completion(text=str(self.answers[self.i % len(self.answers)])))
            self.i += 1
        return out

    def identity(self) -> dict[str, Any]:
        return {"backend": "scripted"}


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from psymetrics_core import evaluate

    out = tmp_path_factory.mktemp("base") / "run"
    evaluate(["bfi"], backend=_Scripted([2, 4]), limit=2, output=out)
    return out


def _damaged(base: Path, tmp_path: Path, fname: str, edit: Any) -> Path:
    run = tmp_path / "run"
    shutil.copytree(base, run)
    target = run / fname
    raw = target.read_bytes() if target.is_file() else b""
    target.write_bytes(edit(raw))
    return run


def test_the_base_run_is_read_by_both(base_run: Path, tmp_path: Path) -> None:
    """The undamaged run loads: each failure below is its edit's."""
    from psymetrics_core.export.tidy import export_table
    from psymetrics_core.report import load_runs_for_report

    (run,) = load_runs_for_report([base_run])
    assert set(run.tasks) == {"bfi"} and len(run.samples) == 2
    assert export_table("samples", [base_run], "csv", tmp_path / "s.csv")[1] == 2


@pytest.mark.parametrize(
    "name, fname, edit, expect", RUN_FILES_RAW, ids=[c[0] for c in RUN_FILES_RAW]
)
def test_fuzz_report_run_files(
    fresh_plugins, base_run: Path, tmp_path: Path, name: str, fname: str, edit: Any, expect: str
) -> None:
    from psymetrics_core.report import write_report

    run = _damaged(base_run, tmp_path, fname, edit)
    out = expect_clean_error(
        lambda: write_report([run], tmp_path / "r.html", session=fresh_plugins),
        [fname],
        label=f"report {name}",
    )
    assert expect in out.message, out.message
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(
    "name, fname, edit, expect", RUN_FILES_RAW, ids=[c[0] for c in RUN_FILES_RAW]
)
def test_fuzz_export_run_files(
    base_run: Path, tmp_path: Path, name: str, fname: str, edit: Any, expect: str
) -> None:
    from psymetrics_core.export.tidy import export_table

    run = _damaged(base_run, tmp_path, fname, edit)
    table = "judge" if fname == "judge.jsonl" else "samples"
    out = expect_clean_error(
        lambda: export_table(table, [run], "csv", tmp_path / "t.csv"),
        [fname],
        label=f"export {name}",
    )
    assert expect in out.message, out.message
    assert not (tmp_path / "t.csv").exists()


CLI_SAMPLE = [
    "results-truncated",
    "results-runs-string",
    "results-missing-model",
    "samples-latin1",
    "samples-repeat-text",
    "results-deep",
]


@pytest.mark.parametrize("name", CLI_SAMPLE)
@pytest.mark.parametrize("command", ["report", "export scores", "export samples"])
def test_fuzz_run_files_through_the_cli(
    base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, command: str
) -> None:
    """The commands themselves: exit 1, one ``psym: error:`` line naming file and field."""
    from psymetrics_core.cli import main

    _, fname, edit, expect = next(c for c in RUN_FILES_RAW if c[0] == name)
    run = _damaged(base_run, tmp_path, fname, edit)
    out = tmp_path / "out.file"
    with pytest.raises(SystemExit) as exc:
        main([*command.split(), str(run), "--output", str(out)], session=shared_session())
    assert exc.value.code == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("psym: error: "), captured.err
    assert fname in lines[0] and expect in lines[0], lines[0]
    assert "Traceback" not in captured.err + captured.out and not out.exists()


ANALYZED = [c for c in RUN_FILES_RAW if c[1] in ("results.json", "samples.jsonl")]


@pytest.mark.parametrize("name, fname, edit, expect", ANALYZED, ids=[c[0] for c in ANALYZED])
def test_fuzz_analyze_run_files(
    base_run: Path, tmp_path: Path, name: str, fname: str, edit: Any, expect: str
) -> None:
    """``psym analyze`` reads the same files with the same reader: the same one line."""
    from psymetrics_core.analysis.records import load_run

    run = _damaged(base_run, tmp_path, fname, edit)
    out = expect_clean_error(lambda: load_run(run), [fname], label=f"analyze {name}")
    assert expect in out.message, out.message


SAMPLES = [
    ("not-json", b"{\n"),
    ("latin1", b'{"item": "' + "\xe9".encode("latin-1") + b'"}\n'),
    ("array-line", b"[1, 2]\n"),
]


@pytest.mark.parametrize("name, raw", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_fuzz_samples_jsonl(base_run: Path, tmp_path: Path, name: str, raw: bytes) -> None:
    """A whole ``samples.jsonl`` replaced by one bad line (moved from test_fuzz_inputs.py,
    where the run's results.json was a bare ``{"tasks": {}}`` that analyze now refuses)."""
    from psymetrics_core.analysis.records import load_run

    run = _damaged(base_run, tmp_path, "samples.jsonl", lambda _: raw)
    out = expect_clean_error(lambda: load_run(run), ["samples.jsonl"], label=name)
    assert "line 1" in out.message, out.message


def test_jsonl_run_files_are_capped_per_line_not_per_file(
    base_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long study's samples.jsonl may exceed the input cap as a whole (it is read a line at a
    time); one line over the cap is the one-line error naming it."""
    from psymetrics_core import evaluate
    from psymetrics_core.export.tidy import export_table

    run = tmp_path / "run"  # 40 distinct items (a repeated line is a duplicate, refused)
    evaluate(["bfi"], backend=_Scripted([2, 4]), limit=40, output=run)
    lines = (run / "samples.jsonl").read_bytes().splitlines(keepends=True)
    cap = max(max(len(x) for x in lines), (run / "results.json").stat().st_size) + 16
    monkeypatch.setenv("PSYM_MAX_INPUT_BYTES", str(cap))
    assert (run / "samples.jsonl").stat().st_size > 2 * cap
    assert export_table("samples", [run], "csv", tmp_path / "s.csv")[1] == 40
    with (run / "samples.jsonl").open("ab") as fh:
        fh.write(b'{"item": "' + b"x" * cap + b'"}\n')
    out = expect_clean_error(
        lambda: export_table("samples", [run], "csv", tmp_path / "t.csv"), ["line 41"]
    )
    assert "PSYM_MAX_INPUT_BYTES" in out.message and "samples.jsonl" in out.message


# `psym validity` reads only the score-bearing fields of results.json: every damage to those
SCORE_FIELDS = [
    c
    for c in RUN_FILES_RAW
    if c[1] == "results.json"
    and c[0]
    not in {
        "results-settings-list",
        "results-missing-model",
        "results-missing-runs",
        "results-missing-instrument",
    }
]


@pytest.mark.parametrize(
    "name, fname, edit, expect", SCORE_FIELDS, ids=[c[0] for c in SCORE_FIELDS]
)
def test_fuzz_validity_results(
    base_run: Path, tmp_path: Path, name: str, fname: str, edit: Any, expect: str
) -> None:
    from psymetrics_core.analysis.ecological import read_runs

    assert read_runs([base_run])  # the undamaged run has scores
    run = _damaged(base_run, tmp_path, fname, edit)
    out = expect_clean_error(lambda: read_runs([run]), [fname], label=f"validity {name}")
    assert expect in out.message, out.message
