"""Fuzz suite, run records that lie (issue 24, item 2): ``results.json`` and ``samples.jsonl``
edited so that they still parse and still have the right types in most places, but claim what
no run produced: duplicate keys, integers past 64 bits, non-finite or out-of-range numbers,
inconsistent counts, huge names, samples that disagree with the results.

(``test_fuzz_rundirs.py`` covers files that are not JSON, not UTF-8 or of the wrong type.)

Every case goes through ``psym report``, ``psym export scores`` and ``psym analyze`` (the
library calls the commands make, plus the real command line for a sample of them) and must end
in the SAME one ``PsymError`` line naming the file and the field or line: the three commands read
through the one run reader (``psymetrics_core.records.read``), so they can never disagree on a
damaged directory.
"""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error, shared_session

from psymetrics_core.api import session_or_default
from psymetrics_core.base.types import Completion

Edit = Callable[[bytes], bytes]


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
    """bfi, 4 items, answers 2 and 4 (extraversion item 1, agreeableness item 2, ...)."""
    from psymetrics_core import evaluate

    out = tmp_path_factory.mktemp("records") / "run"
    evaluate(["bfi"], backend=_Scripted([2, 4]), limit=4, output=out)
    return out


# ---- edits ---------------------------------------------------------------------------------


def _results(fn: Callable[[dict[str, Any]], None]) -> Edit:
    def edit(raw: bytes) -> bytes:
        data = json.loads(raw)
        fn(data)
        return json.dumps(data, indent=1).encode()

    return edit


def _both(field: str, value: Any, scale: str = "extraversion") -> Edit:
    """Set a scale field at the task level AND in runs[0] (so they still agree)."""

    def fn(d: dict[str, Any]) -> None:
        d["tasks"]["bfi"]["scales"][scale][field] = value
        d["tasks"]["bfi"]["runs"][0]["scales"][scale][field] = value

    return _results(fn)


def _task(field: str, value: Any, *, run_too: bool = True) -> Edit:
    def fn(d: dict[str, Any]) -> None:
        d["tasks"]["bfi"][field] = value
        if run_too:
            d["tasks"]["bfi"]["runs"][0][field] = value

    return _results(fn)


def _top(field: str, value: Any) -> Edit:
    def fn(d: dict[str, Any]) -> None:
        d[field] = value

    return _results(fn)


def _raw(old: bytes, new: bytes) -> Edit:
    def edit(raw: bytes) -> bytes:
        text = json.dumps(json.loads(raw), indent=1).encode()
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


def _dup_tasks(raw: bytes) -> bytes:
    """A second ``"tasks": {}`` after the real one (json.loads keeps the empty one)."""
    body = raw.rstrip().rstrip(b"}")
    return body + b', "tasks": {}}'


def _line(n: int, fn: Callable[[dict[str, Any]], None]) -> Edit:
    """Edit sample line ``n`` (1-based)."""

    def edit(raw: bytes) -> bytes:
        lines = raw.decode().splitlines()
        row = json.loads(lines[n - 1])
        fn(row)
        lines[n - 1] = json.dumps(row)
        return ("\n".join(lines) + "\n").encode()

    return edit


def _set(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def fn(row: dict[str, Any]) -> None:
        row[field] = value

    return fn


def _lines(fn: Callable[[list[bytes]], list[bytes]]) -> Edit:
    def edit(raw: bytes) -> bytes:
        return b"".join(fn(raw.splitlines(keepends=True)))

    return edit


MB = "x" * 1_000_000

# (name, file, edit, what the one line must contain)
RESULTS_JSON: list[tuple[str, str, Edit, str]] = [
    ("dup-tasks-key", "results.json", _dup_tasks, "key 'tasks' appears twice"),
    (
        "dup-scale-key",
        "results.json",
        _raw(b'"score": 2.0', b'"score": 2.0, "score": 5.0'),
        "key 'score' appears twice",
    ),
    (
        "dup-top-seed",
        "results.json",
        _raw(b'"seed": 1234', b'"seed": 1234, "seed": 1'),
        "key 'seed' appears twice",
    ),
    (
        "int-5000-digits-score",
        "results.json",
        _raw(b'"score": 2.0', b'"score": ' + b"9" * 5000),
        "5,000 digits",
    ),
    (
        "int-5000-digits-negative",
        "results.json",
        _raw(b'"n_items": 4', b'"n_items": -' + b"9" * 5000),
        "5,000 digits",
    ),
    (
        "int-past-64-bits-seed",
        "results.json",
        _raw(b'"seed": 1234', b'"seed": 9' * 1 + b"0" * 19),
        "beyond 64 bits",
    ),
    ("float-1e400", "results.json", _raw(b'"score": 2.0', b'"score": 1e400'), "too large"),
    (
        "float-minus-1e400",
        "results.json",
        _raw(b'"parse_rate": 1.0', b'"parse_rate": -1e400'),
        "too large",
    ),
    (
        "infinity-constant",
        "results.json",
        _raw(b'"score": 2.0', b'"score": Infinity'),
        "Infinity is not a JSON number",
    ),
]

RESULTS_VALUES: list[tuple[str, str, Edit, str]] = [
    ("seed-1e40", "results.json", _top("seed", 1e40), "field 'seed'"),
    ("seed-1e40-task", "results.json", _task("seed", 1e40), "field 'tasks.bfi"),
    ("score-1e308", "results.json", _both("score", 1e308), "scales.extraversion.score"),
    ("score-minus-1e308", "results.json", _both("score", -1e308), "scales.extraversion.score"),
    ("score-6-on-1-5", "results.json", _both("score", 6.0), "outside the scale's range 1..5"),
    ("score-0-on-1-5", "results.json", _both("score", 0.0), "outside the scale's range 1..5"),
    ("score-string-NaN", "results.json", _both("score", "NaN"), "scales.extraversion.score"),
    ("score-string-inf", "results.json", _both("score", "inf"), "scales.extraversion.score"),
    ("z-string-NaN", "results.json", _both("z", "NaN"), "scales.extraversion.z"),
    ("score-list", "results.json", _both("score", [1]), "scales.extraversion.score"),
    ("n-items-negative", "results.json", _task("n_items", -1), "n_items"),
    ("scale-n-items-negative", "results.json", _both("n_items", -3), "n_items"),
    ("n-answered-above-n-items", "results.json", _task("n_answered", 99), "more than n_items"),
    ("scale-n-answered-above", "results.json", _both("n_answered", 50), "more than n_items"),
    ("n-refused-above", "results.json", _task("n_refused", 7), "more than n_items"),
    ("n-unparsed-negative", "results.json", _task("n_unparsed", -2), "n_unparsed"),
    ("parse-rate-2", "results.json", _task("parse_rate", 2), "parse_rate"),
    ("parse-rate-negative", "results.json", _task("parse_rate", -0.5), "parse_rate"),
    ("parse-rate-string-nan", "results.json", _task("parse_rate", "nan"), "parse_rate"),
    ("repeat-negative", "results.json", _task("repeat", -1), "repeat"),
    ("limit-negative", "results.json", _top("limit", -5), "field 'limit'"),
    ("repeats-negative", "results.json", _top("repeats", -1), "field 'repeats'"),
    ("seeds-huge", "results.json", _top("seeds", [1e40]), "field 'seeds.0'"),
    ("indicators-string", "results.json", _task("indicators", "bad"), "indicators"),
    (
        "indicators-entry-number",
        "results.json",
        _task("indicators", {"parse_rate": 5}),
        "indicators.parse_rate",
    ),
    (
        "indicators-fired-maybe",
        "results.json",
        _task("indicators", {"parse_rate": {"value": 1.0, "fired": "maybe"}}),
        "indicators.parse_rate.fired",
    ),
    (
        "indicators-no-fired",
        "results.json",
        _task("indicators", {"parse_rate": {"value": 1}}),
        "indicators.parse_rate.fired",
    ),
    (
        "indicators-value-text",
        "results.json",
        _task("indicators", {"parse_rate": {"value": "high", "fired": True}}),
        "indicators.parse_rate.value",
    ),
    ("label-1mb", "results.json", _top("label", MB), "field 'label'"),
    ("model-1mb", "results.json", _top("model", MB), "field 'model'"),
    ("condition-1mb", "results.json", _task("condition", MB), "condition"),
    ("method-1mb", "results.json", _both("method", MB), "method"),
    (
        "scale-name-1mb",
        "results.json",
        _results(
            lambda d: d["tasks"]["bfi"]["scales"].update(
                {MB: d["tasks"]["bfi"]["scales"]["extraversion"]}
            )
        ),
        "tasks.bfi.scales",
    ),
    ("runs-empty", "results.json", _task("runs", [], run_too=False), "tasks.bfi.runs"),
    (
        "report-export-disagree-score",
        "results.json",
        _results(lambda d: d["tasks"]["bfi"]["scales"]["extraversion"].update(score=4.0)),
        "a report and an export would disagree",
    ),
    (
        "report-export-disagree-n-items",
        "results.json",
        _task("n_items", 5, run_too=False),
        "a report and an export would disagree",
    ),
    (
        "report-export-disagree-condition",
        "results.json",
        _task("condition", "persona", run_too=False),
        "a report and an export would disagree",
    ),
    (
        "scale-missing-in-runs",
        "results.json",
        _results(lambda d: d["tasks"]["bfi"]["runs"][0]["scales"].pop("extraversion")),
        "not in runs.0.scales",
    ),
    (
        "runs-duplicated",
        "results.json",
        _results(lambda d: d["tasks"]["bfi"]["runs"].append(d["tasks"]["bfi"]["runs"][0])),
        "each administration once",
    ),
]

SAMPLES: list[tuple[str, str, Edit, str]] = [
    ("empty-file", "samples.jsonl", lambda r: b"", "an empty samples.jsonl"),
    ("blank-lines-only", "samples.jsonl", lambda r: b"\n\n", "an empty samples.jsonl"),
    ("duplicate-line", "samples.jsonl", _lines(lambda ls: [*ls, ls[0]]), "line 5: field 'item'"),
    (
        "duplicate-line-first",
        "samples.jsonl",
        _lines(lambda ls: [ls[0], *ls]),
        "line 2: field 'item'",
    ),
    ("line-missing", "samples.jsonl", _lines(lambda ls: ls[:-1]), "claims 4"),
    ("answer-negative", "samples.jsonl", _line(1, _set("answer", -3)), "line 1: 'answer' -3"),
    ("answer-above-max", "samples.jsonl", _line(1, _set("answer", 9)), "outside the item's"),
    ("answer-huge", "samples.jsonl", _line(1, _set("answer", 10**30)), "beyond 64 bits"),
    (
        "answer-string-nan",
        "samples.jsonl",
        _line(1, _set("answer", "NaN")),
        "line 1: field 'answer'",
    ),
    ("answer-dropped", "samples.jsonl", _line(1, _set("answer", None)), "n_answered"),
    ("repeat-negative", "samples.jsonl", _line(2, _set("repeat", -1)), "line 2: field 'repeat'"),
    ("repeat-unknown", "samples.jsonl", _line(2, _set("repeat", 7)), "line 2: field 'repeat'"),
    ("repeat-1e40", "samples.jsonl", _line(2, _set("repeat", 1e40)), "line 2: field 'repeat'"),
    (
        "condition-unknown",
        "samples.jsonl",
        _line(3, _set("condition", "persona")),
        "line 3: field 'repeat'",
    ),
    ("task-unknown", "samples.jsonl", _line(1, _set("task", "mfq")), "line 1: field 'task'"),
    ("task-1mb", "samples.jsonl", _line(1, _set("task", MB)), "line 1: field 'task'"),
    ("item-1mb", "samples.jsonl", _line(1, _set("item", MB)), "line 1: field 'item'"),
    (
        "keyed-string-nan",
        "samples.jsonl",
        _line(1, _set("keyed", {"extraversion": "NaN"})),
        "line 1: field 'keyed.extraversion'",
    ),
    (
        "option-probs-2",
        "samples.jsonl",
        _line(1, _set("option_probs", {"1": 2.0})),
        "line 1: field 'option_probs",
    ),
    (
        "dup-key-in-line",
        "samples.jsonl",
        _lines(lambda ls: [ls[0].replace(b'"repeat": 0', b'"repeat": 0, "repeat": 5'), *ls[1:]]),
        "line 1: invalid JSON (key 'repeat' appears twice",
    ),
    (
        "meta-min-above-max",
        "samples.jsonl",
        _line(1, lambda row: row["item_meta"].update(min=5, max=1)),
        "line 1: field 'item_meta'",
    ),
]

CASES = RESULTS_JSON + RESULTS_VALUES + SAMPLES
IDS = [f"{c[1].split('.')[0]}-{c[0]}" for c in CASES]


def _damaged(base: Path, tmp_path: Path, fname: str, edit: Edit) -> Path:
    run = tmp_path / "run"
    shutil.copytree(base, run)
    target = run / fname
    target.write_bytes(edit(target.read_bytes()))
    return run


@functools.cache
def _session() -> Any:
    """One session of the installed plugins for every report below (the report takes one)."""
    return session_or_default()


def _report(run: Path, out: Path) -> Any:
    from psymetrics_core.report import write_report

    return write_report([run], out, session=_session())


def _export_scores(run: Path, out: Path) -> Any:
    from psymetrics_core.export.tidy import export_table

    return export_table("scores", [run], "csv", out)


def _analyze(run: Path, out: Path) -> Any:
    from psymetrics_core.analysis.records import load_run

    return load_run(run)


COMMANDS = {"report": _report, "export-scores": _export_scores, "analyze": _analyze}


def test_the_base_run_is_read_by_every_command(base_run: Path, tmp_path: Path) -> None:
    """The undamaged run loads everywhere: each failure below is its edit's."""
    for name, fn in COMMANDS.items():
        fn(base_run, tmp_path / f"{name}.out")


@pytest.mark.parametrize("name, fname, edit, expect", CASES, ids=IDS)
def test_fuzz_records_same_line_everywhere(
    base_run: Path, tmp_path: Path, name: str, fname: str, edit: Edit, expect: str
) -> None:
    run = _damaged(base_run, tmp_path, fname, edit)
    messages = {}
    for command, fn in COMMANDS.items():
        out = tmp_path / f"{command}.out"
        outcome = expect_clean_error(
            lambda fn=fn, out=out: fn(run, out), [fname], label=f"{command} {name}"
        )
        assert expect in outcome.message, outcome.message
        assert len(outcome.message) < 1200, outcome.message[:300]
        assert not out.exists()
        messages[command] = outcome.message
    assert len(set(messages.values())) == 1, messages


CLI_SAMPLE = [
    "dup-tasks-key",
    "int-5000-digits-score",
    "seed-1e40",
    "score-1e308",
    "score-string-NaN",
    "label-1mb",
    "report-export-disagree-score",
    "empty-file",
    "duplicate-line",
    "task-unknown",
]


@pytest.mark.parametrize("name", CLI_SAMPLE)
@pytest.mark.parametrize("command", ["report", "export scores", "analyze"])
def test_fuzz_records_through_the_cli(
    base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, command: str
) -> None:
    """The commands themselves: exit 1 and one ``psym: error:`` line, the same for all."""
    from psymetrics_core.cli import main

    _, fname, edit, expect = next(c for c in CASES if c[0] == name)
    run = _damaged(base_run, tmp_path, fname, edit)
    out = tmp_path / "out.file"
    with pytest.raises(SystemExit) as exc:
        main([*command.split(), str(run), "--output", str(out)], session=shared_session())
    assert exc.value.code == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("psym: error: "), captured.err[:2000]
    assert fname in lines[0] and expect in lines[0], lines[0]
    assert "Traceback" not in captured.err + captured.out and not out.exists()
