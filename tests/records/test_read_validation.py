"""The one validating run reader (``psymetrics_core.records.read``, issue 24 item 2): strict
JSON, bounded record fields, samples checked against results, streamed samples, and legitimate
runs of every kind still loading."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Completion
from psymetrics_core.records.read import load_run_data, read_results
from psymetrics_core.records.strict_json import parse_record


class _Scripted:
    """Answers the i-th prompt with ``answers[i % len]`` (a fake model, unit tests only)."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers, self.i = answers, 0

    def generate(self, prompts: Any, settings: Any, reporter: Any = None) -> list[Completion]:
        out = []
        for _ in prompts:
            out.append(Completion(text=str(self.answers[self.i % len(self.answers)])))
            self.i += 1
        return out

    def identity(self) -> dict[str, Any]:
        return {"backend": "scripted"}


@pytest.fixture(scope="module")
def grid_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three questionnaires (mean, sum-free, percent scoring), two conditions, two repeats."""
    from psymetrics_core import evaluate

    out = tmp_path_factory.mktemp("grid") / "run"
    evaluate(
        ["bfi", "mfq", "16p"],
        backend=_Scripted([2, 4, 5]),
        limit=5,
        conditions=["original", "reversed-options"],
        repeats=2,
        output=out,
    )
    return out


# ---- strict JSON ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expect",
    [
        ('{"tasks": {"a": 1}, "tasks": {}}', "key 'tasks' appears twice"),
        ('{"a": {"b": 1, "b": 2}}', "key 'b' appears twice"),
        ('{"a": ' + "7" * 5000 + "}", "5,000 digits"),
        ('{"a": 9223372036854775808}', "beyond 64 bits"),
        ('{"a": -9223372036854775808}', "beyond 64 bits"),
        ('{"a": 1e400}', "too large"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": -Infinity}', "-Infinity is not a JSON number"),
    ],
)
def test_strict_json_refuses(text: str, expect: str) -> None:
    with pytest.raises(PsymError) as exc:
        parse_record(text, "f.json")
    assert str(exc.value).startswith("f.json") and expect in str(exc.value), str(exc.value)


def test_strict_json_names_the_line_of_the_second_key() -> None:
    with pytest.raises(PsymError, match=r"f.json, line 4: .*'tasks' appears twice"):
        parse_record('{\n "tasks": {},\n "x": 1,\n "tasks": {}\n}', "f.json")


def test_strict_json_keeps_what_json_keeps() -> None:
    text = '{"a": [1, -2, 3.5, 9223372036854775807, null, true, "NaN"], "b": {"c": 1e300}}'
    assert parse_record(text, "f.json") == json.loads(text)


# ---- legitimate runs ----------------------------------------------------------------------


def test_a_grid_run_loads_with_counts_and_ranges(grid_run: Path) -> None:
    run = load_run_data(grid_run)
    assert set(run.tasks) == {"bfi", "mfq", "16p"}
    assert len(run.samples) == 3 * 5 * 2 * 2 == sum(1 for _ in run.samples)
    assert run.record is not None and len(run.record.tasks["16p"].runs) == 4


def test_legitimate_runs_of_other_kinds_load(tmp_path: Path) -> None:
    """A free-text and a judged task (judge.jsonl) pass the same checks."""
    from psymetrics_core import evaluate

    out = tmp_path / "run"
    evaluate(["refletter", "moral-advice"], backend=_Scripted(["2"]), limit=2, output=out)
    run = load_run_data(out)
    assert len(run.samples) == 4 and len(run.judge) > 0


def test_samples_are_streamed_not_kept(grid_run: Path) -> None:
    """RunData holds no list of samples: iterating twice reads the file twice."""
    run = load_run_data(grid_run)
    assert not isinstance(run.samples, list)
    first = [s["item"] for s in run.samples]
    assert first == [s["item"] for s in run.samples] and len(first) == 60


def test_many_sample_lines_stay_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 1,760-line samples file: the reader's memory does not grow with the file (each line
    is parsed and dropped; the scan keeps one hash per line). The per-line cap is set to
    1 MiB, as a line buffer of that size is allocated once."""
    from psymetrics_core import evaluate

    out = tmp_path / "run"
    evaluate(["bfi"], backend=_Scripted([3]), limit=44, repeats=40, output=out)
    assert sum(1 for _ in (out / "samples.jsonl").open()) == 44 * 40
    monkeypatch.setenv("PSYM_MAX_INPUT_BYTES", str(2**20))
    load_run_data(out)  # warm: the record models build their validators on first use
    tracemalloc.start()
    run = load_run_data(out)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    size = (out / "samples.jsonl").stat().st_size
    assert len(run.samples) == 1760 and peak < size / 2, (peak, size)


# ---- damaged records -----------------------------------------------------------------------


def _edit_results(run: Path, fn: Any) -> None:
    data = json.loads((run / "results.json").read_text())
    fn(data)
    (run / "results.json").write_text(json.dumps(data))


def _copy(grid_run: Path, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(grid_run, run)
    return run


def test_the_range_of_a_mean_comes_from_the_items(grid_run: Path, tmp_path: Path) -> None:
    run = _copy(grid_run, tmp_path)

    def fn(d: dict[str, Any]) -> None:
        for place in (d["tasks"]["bfi"], d["tasks"]["bfi"]["runs"][0]):
            place["scales"]["extraversion"]["score"] = 5.5

    _edit_results(run, fn)
    with pytest.raises(PsymError, match=r"'tasks.bfi.scales.extraversion.score': 5.5 is outside"):
        load_run_data(run)


def test_a_percent_score_stays_within_0_100(grid_run: Path, tmp_path: Path) -> None:
    run = _copy(grid_run, tmp_path)
    _edit_results(
        run, lambda d: d["tasks"]["16p"]["runs"][3]["scales"]["judging"].update(score=101.0)
    )
    with pytest.raises(PsymError, match=r"runs.3.scales.judging.score': 101 is outside .*0..100"):
        load_run_data(run)


def test_counts_per_administration_match(grid_run: Path, tmp_path: Path) -> None:
    run = _copy(grid_run, tmp_path)
    lines = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    keep = [x for x in lines if not ('"task": "mfq"' in x and '"repeat": 1' in x)]
    (run / "samples.jsonl").write_text("".join(keep))
    with pytest.raises(PsymError, match=r"0 sample line\(s\) for task mfq .*runs.1.n_items"):
        load_run_data(run)


def test_validity_reads_the_same_bounds(grid_run: Path, tmp_path: Path) -> None:
    """``psym validity`` reads results.json only, with the same bounded fields."""
    run = _copy(grid_run, tmp_path)
    _edit_results(run, lambda d: d["tasks"]["mfq"]["runs"][2]["scales"]["care"].update(score="NaN"))
    with pytest.raises(PsymError, match=r"field 'tasks.mfq.runs.2.scales.care.score'"):
        read_results(run)


def test_merge_reads_shards_through_the_reader(grid_run: Path, tmp_path: Path) -> None:
    """``psym merge`` reads a shard's samples with the run reader: a duplicated line is the
    same one line as for report (not a second administration in the merged run)."""
    from psymetrics_core.study.merge import _read_shard

    run = _copy(grid_run, tmp_path)
    shard = {"plan": "0" * 64, "shard": [1, 1], "complete": True, "units": []}
    (run / "shard.json").write_text(json.dumps(shard))  # as study/plan_records.ShardRecord
    first = (run / "samples.jsonl").read_text().splitlines(keepends=True)[0]
    with (run / "samples.jsonl").open("a") as fh:
        fh.write(first)
    with pytest.raises(PsymError, match=r"line 61: field 'item': a second line"):
        _read_shard(run)
