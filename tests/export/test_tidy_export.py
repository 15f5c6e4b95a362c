"""``psym export scores|samples|judge``: tidy tables written by polars.

The run directories are built by ``evaluate()`` with a scripted backend (a unit test: the
exported rows must follow from what the run recorded, so the answers are fixed by hand).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from psymetrics_core.base.types import Completion
from psymetrics_core.export.tidy import SAMPLE_SCHEMA, SCORE_SCHEMA

pl = pytest.importorskip("polars")


class _Scripted:
    """Answers the i-th prompt with ``answers[i % len]`` (a fake model, unit tests only)."""

    name = "scripted"

    def __init__(self, answers):
        self.answers = answers
        self.i = 0

    def generate(self, prompts, settings, reporter=None):
        out = []
        for _ in prompts:
            out.append(Completion(text=str(self.answers[self.i % len(self.answers)])))
            self.i += 1
            if reporter:
                reporter.advance()
        return out

    def identity(self):
        return {"backend": self.name}


@pytest.fixture
def run_dirs(tmp_path: Path) -> list[Path]:
    from psymetrics_core import evaluate

    dirs = []
    for name, answers in (("a", [1, 2, 3, 4, 5]), ("b", [4, 4, 2, "no idea"])):
        out = tmp_path / name
        evaluate(
            ["bfi", "mfq"],
            backend=_Scripted(answers),
            limit=10,
            output=out,
            conditions=["original", "reversed-options"],
            repeats=2,
            seed=7,
        )
        dirs.append(out)
    return dirs


def test_scores_parquet_and_csv(run_dirs: list[Path], tmp_path: Path):
    from psymetrics_core.cli import main

    pq, csv = tmp_path / "scores.parquet", tmp_path / "scores.csv"
    main(["export", "scores", *map(str, run_dirs), "--format", "parquet", "--output", str(pq)])
    main(["export", "scores", *map(str, run_dirs), "--format", "csv", "--output", str(csv)])
    frame = pl.read_parquet(pq)
    assert frame.columns == list(SCORE_SCHEMA)
    # 2 runs x 2 tasks x 2 conditions x 2 repeats x 5 scales
    assert frame.height == 2 * 2 * 2 * 2 * 5
    key = ["run", "label", "task", "condition", "repeat", "seed", "scale"]
    assert frame.select(key).is_unique().all()
    from_csv = pl.read_csv(csv, schema=frame.schema)
    assert from_csv.equals(frame)
    # every row is the score results.json recorded for that administration
    for row in frame.iter_rows(named=True):
        res = json.loads((tmp_path / row["run"] / "results.json").read_text())
        adm = [
            r
            for r in res["tasks"][row["task"]]["runs"]
            if r["condition"] == row["condition"] and r["repeat"] == row["repeat"]
        ]
        assert len(adm) == 1 and adm[0]["seed"] == row["seed"]
        assert adm[0]["scales"][row["scale"]]["score"] == row["score"]
    assert set(frame["seed"]) == {7, 8}


def test_samples_one_row_per_prompt(run_dirs: list[Path], tmp_path: Path):
    from psymetrics_core.export.tidy import export_table

    out, n = export_table("samples", run_dirs, "parquet", tmp_path / "s.parquet")
    frame = pl.read_parquet(out)
    assert frame.columns == list(SAMPLE_SCHEMA)
    lines = sum(len((d / "samples.jsonl").read_text().splitlines()) for d in run_dirs)
    assert n == frame.height == lines == 2 * 2 * 2 * 2 * 10
    unparsed = frame.filter(pl.col("parse_status") != "ok")
    assert unparsed.height > 0 and unparsed["answer"].is_null().all()


def test_bad_run_dir_is_one_line(tmp_path: Path, capsys):
    from psymetrics_core.cli import main

    with pytest.raises(SystemExit):
        main(["export", "scores", str(tmp_path / "nope"), "--output", str(tmp_path / "x.csv")])
    err = capsys.readouterr().err
    assert "results.json: no such file" in err and len(err.strip().splitlines()) == 1
