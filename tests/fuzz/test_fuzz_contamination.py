"""Fuzz suite, ``psym contamination tables RUN... [-o FILE]`` (issue 24, item 7).

Bad runs and bad outputs must end in one ``PsymError`` line naming the run, file or field
(``harness.expect_clean_error``) and write nothing; a sample goes through the real command line
(one ``psym: error:`` line, exit 1). The runs are real ``psym contamination`` runs against the
plugin's loopback answer server (``plugins/psymetrics-plugin-contamination/tests``); the
"run of another command" is a ``psym eval`` run.

Classes: RUNS (missing, of another command, mixed instruments, and their neighbours: an empty
folder, a file, a FIFO, damaged or tampered ``contamination.json`` / ``results.json``, duplicate
or miscounted labels) and OUTPUTS (suffix, folder, FIFO, missing parent, /proc, a 300-character
name, the command's own input).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error

from psymetrics_core.api import session_or_default
from psymetrics_core.base.types import Completion

pytest.importorskip("psymetrics_plugin_contamination")
PLUGIN_TESTS = Path(__file__).resolve().parents[2] / "plugins/psymetrics-plugin-contamination/tests"


def _oracle_run(out: Path, tasks: tuple[str, ...]) -> Path:
    sys.path.insert(0, str(PLUGIN_TESTS))
    try:
        from oracle_server import AnswerKey, KeyItem, OracleServer
    finally:
        sys.path.remove(str(PLUGIN_TESTS))
    from psymetrics_plugin_contamination.inventory import build_inventory

    from psymetrics_core import get_instrument

    keys = []
    for task in tasks:  # what a perfect model knows (the plugin's probe view; no values checked)
        inv = build_inventory(get_instrument(task))
        items = [
            KeyItem(
                it.index,
                it.shown,
                it.dimension or "",
                [o.label for o in it.options],
                it.gold_scores(),
            )
            for it in inv.items
        ]
        keys.append(AnswerKey(inv.name, items))
    from psymetrics_plugin_contamination.options import ProbeOptions
    from psymetrics_plugin_contamination.run import contamination

    with OracleServer(keys) as srv:
        contamination(
            list(tasks),
            probes=("verbatim", "keyword", "option-score"),
            model="openai-chat",
            model_args=f"base_url={srv.base_url},model=oracle,concurrency=8",
            options=ProbeOptions(bootstrap=10, verbatim_control="none"),
            limit=3,
            output=out,
            session=session_or_default(),
        )
    return out


class _Scripted:
    """Answers every questionnaire prompt "3" (a fake model for the ``psym eval`` run only)."""

    def generate(self, prompts: Any, settings: Any, reporter: Any = None) -> list[Completion]:
        return [Completion(text="3") for _ in prompts]

    def identity(self) -> dict[str, Any]:
        return {"backend": "scripted"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from psymetrics_core import evaluate

    base = tmp_path_factory.mktemp("contam")
    evaluate(["bfi"], backend=_Scripted(), limit=2, output=base / "eval")
    return {
        "both": _oracle_run(base / "both", ("bfi", "mfq")),
        "bfi": _oracle_run(base / "bfi", ("bfi",)),
        "eval": base / "eval",
    }


def _copy(run: Path, tmp: Path, edit: Callable[[Path], None] | None = None) -> Path:
    out = tmp / f"copy-{run.name}"
    shutil.copytree(run, out)
    if edit is not None:
        edit(out)
    return out


def _json_edit(fname: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        data = json.loads((run / fname).read_text())
        change(data)
        (run / fname).write_text(json.dumps(data))

    return edit


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *head, last = path.split("/")
        node = data
        for key in head:
            node = node[key]
        node[last] = value

    return change


def _both_score(value: float) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        _json_edit("results.json", _set("tasks/bfi.keyword/scales/success_rate/score", value))(run)
        _json_edit("contamination.json", _set("tasks/bfi/probes/keyword/value", value))(run)

    return edit


def _fifo(run: Path) -> None:
    (run / "contamination.json").unlink()
    os.mkfifo(run / "contamination.json")


# name -> (paths given to the command, labels, what the one line must contain)
Case = Callable[[dict[str, Path], Path], tuple[list[Path], list[str], list[str]]]
RUN_CASES: dict[str, Case] = {
    "missing-run": lambda r, t: ([r["both"], t / "nope"], [], [str(t / "nope"), "no such file"]),
    "run-of-another-command": lambda r, t: (
        [r["both"], r["eval"]],
        [],
        [str(r["eval"]), "not a `psym contamination` run"],
    ),
    "mixed-instruments": lambda r, t: (
        [r["both"], r["bfi"]],
        ["a", "b"],
        [str(r["bfi"]), "same instruments"],
    ),
    "mixed-instruments-reversed": lambda r, t: (
        [r["bfi"], r["both"]],
        ["a", "b"],
        [str(r["both"]), "probes bfi, mfq"],
    ),
    "empty-folder": lambda r, t: ([(t / "empty").resolve()], [], ["no such file"]),
    "run-is-a-file": lambda r, t: ([r["both"] / "samples.jsonl"], [], ["no such file"]),
    "no-runs": lambda r, t: ([], [], ["at least one run"]),
    "duplicate-label": lambda r, t: ([r["both"], r["both"]], [], ["row label 'oracle'"]),
    "label-count": lambda r, t: ([r["both"], r["both"]], ["x"], ["--label", "one per run"]),
    "panel-fifo": lambda r, t: ([_copy(r["both"], t, _fifo)], [], ["contamination.json"]),
    "panel-not-json": lambda r, t: (
        [_copy(r["both"], t, lambda p: (p / "contamination.json").write_text("{"))],
        [],
        ["contamination.json"],
    ),
    "panel-a-list": lambda r, t: (
        [_copy(r["both"], t, lambda p: (p / "contamination.json").write_text("[]"))],
        [],
        ["contamination.json", "(the record)"],
    ),
    "panel-other-schema": lambda r, t: (
        [_copy(r["both"], t, _json_edit("contamination.json", _set("schema", "other/9")))],
        [],
        ["contamination.json", "field 'schema'"],
    ),
    "panel-no-tasks": lambda r, t: (
        [_copy(r["both"], t, _json_edit("contamination.json", _set("tasks", {})))],
        [],
        ["contamination.json", "field 'tasks'"],
    ),
    "panel-tasks-a-list": lambda r, t: (
        [_copy(r["both"], t, _json_edit("contamination.json", _set("tasks", [1])))],
        [],
        ["contamination.json", "tasks"],
    ),
    "panel-no-inventory-name": lambda r, t: (
        [
            _copy(
                r["both"],
                t,
                _json_edit("contamination.json", lambda d: d["tasks"]["bfi"].pop("inventory_name")),
            )
        ],
        [],
        ["contamination.json", "inventory_name"],
    ),
    "panel-value-a-word": lambda r, t: (
        [
            _copy(
                r["both"],
                t,
                _json_edit("contamination.json", _set("tasks/bfi/probes/verbatim/value", "low")),
            )
        ],
        [],
        ["contamination.json", "value"],
    ),
    "panel-value-tampered": lambda r, t: (
        [
            _copy(
                r["both"],
                t,
                _json_edit("contamination.json", _set("tasks/bfi/probes/verbatim/value", 0.5)),
            )
        ],
        [],
        ["disagree on bfi verbatim"],
    ),
    "results-score-tampered": lambda r, t: (
        [
            _copy(
                r["both"],
                t,
                _json_edit("results.json", _set("tasks/mfq.option-score/scales/MAE/score", 2.0)),
            )
        ],
        [],
        ["tasks.mfq.option-score", "would disagree"],  # the run reader catches it first
    ),
    "rate-above-one": lambda r, t: (
        [_copy(r["both"], t, _both_score(2.0))],
        [],
        ["success_rate", "would disagree"],  # the run reader catches it first
    ),
    "rate-negative": lambda r, t: (
        [_copy(r["both"], t, _both_score(-0.5))],
        [],
        ["success_rate", "would disagree"],  # the run reader catches it first
    ),
    "results-missing-beside-panel": lambda r, t: (
        [_copy(r["both"], t, lambda p: (p / "results.json").unlink())],
        [],
        ["results.json"],
    ),
    "results-metric-missing": lambda r, t: (
        [
            _copy(
                r["both"],
                t,
                _json_edit("results.json", lambda d: d["tasks"]["bfi.verbatim"]["scales"].clear()),
            )
        ],
        [],
        ["results.json", "scales"],
    ),
}


@pytest.mark.parametrize("name", list(RUN_CASES))
def test_fuzz_tables_runs(runs: dict[str, Path], tmp_path: Path, name: str) -> None:
    from psymetrics_plugin_contamination.tables import load_runs

    (tmp_path / "empty").mkdir()
    paths, labels, expect = RUN_CASES[name](runs, tmp_path)
    out = expect_clean_error(lambda: load_runs(paths, labels), label=name)
    for part in expect:
        assert part in out.message, out.message
    print(f"{name}: {out.message}")


def test_the_undamaged_runs_make_tables(runs: dict[str, Path]) -> None:
    """Each failure above is its edit's: the runs themselves load."""
    from psymetrics_plugin_contamination.tables import load_runs, paper_tables

    loaded = load_runs([runs["both"], runs["both"]], ["a", "b"])
    assert len(paper_tables(loaded)) == 4


# name -> (output path, what the one line must contain)
OUT_CASES: dict[str, Callable[[Path], tuple[Path, str]]] = {
    "output-suffix-xlsx": lambda t: (t / "t.xlsx", "expected a .md or .csv file name"),
    "output-no-suffix": lambda t: (t / "table", "expected a .md or .csv file name"),
    "output-empty": lambda t: (Path(""), "expected a .md or .csv file name"),
    "output-a-folder": lambda t: (t / "dir.md", "expected a regular file or a new path"),
    "output-a-fifo": lambda t: (t / "fifo.csv", "expected a regular file or a new path"),
    "output-parent-missing": lambda t: (t / "no" / "t.md", "cannot write"),
    "output-parent-a-file": lambda t: (t / "file" / "t.md", "cannot write"),
    "output-under-proc": lambda t: (Path("/proc/self/t.md"), "not under /proc"),
    "output-name-too-long": lambda t: (t / ("x" * 300 + ".md"), "cannot write"),
}


@pytest.mark.parametrize("name", list(OUT_CASES))
def test_fuzz_tables_outputs(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Through the real command line: exit 1, one ``psym: error:`` line, nothing written."""
    from psymetrics_core.cli import main

    (tmp_path / "dir.md").mkdir()
    os.mkfifo(tmp_path / "fifo.csv")
    (tmp_path / "file").write_text("")
    before = sorted(p.name for p in tmp_path.iterdir())
    out, expect = OUT_CASES[name](tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["contamination", "tables", str(runs["both"]), "-o", str(out)])
    assert exc.value.code == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert "Traceback" not in captured.err + captured.out
    assert len(lines) == 1 and lines[0].startswith("psym: error: "), captured.err
    assert expect in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no file, no temporary left
    print(f"{name}: {lines[-1]}")


def test_fuzz_tables_output_onto_its_own_input(runs: dict[str, Path], tmp_path: Path) -> None:
    """The writer refuses the command's own inputs (the run records), compared by identity."""
    from psymetrics_plugin_contamination.tables import load_runs, run_inputs, write_output

    run = _copy(runs["both"], tmp_path)
    loaded = load_runs([run])
    target = run / "results.json"
    before = target.read_bytes()
    out = expect_clean_error(
        lambda: write_output(target, "x", run_inputs(loaded)), [str(target)], label="own-input"
    )
    assert "is one of the command's inputs" in out.message
    assert target.read_bytes() == before
