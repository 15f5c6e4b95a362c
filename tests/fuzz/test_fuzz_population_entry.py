"""Fuzz suite, the population entry of results.json (issue 31, item 1): ``tasks.<task>.population``
edited by hand into what no run writes (not a list, counts that contradict each other, negative
or non-finite numbers, unknown or missing fields), and task-level fields of a population run that
are not over every cell (counts not the sums over ``runs``, a respondent's condition). ``psym
report``, ``psym export population`` and ``psym export scores`` read it through the one run
reader, so each case ends in one ``PsymError`` line naming results.json and the field, and
writes nothing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error, run_cli, shared_session

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
    """bfi, 4 items, 3 respondents of the binary Big Five population."""
    from psymetrics_core.administer.runner import evaluate

    root = tmp_path_factory.mktemp("popentry")
    run_cli(["population", "build", "--generate", "binary", "-o", str(root / "big5.jsonl")])
    out = root / "run"
    population = root / "big5.jsonl"
    evaluate(
        ["bfi"], _config(out, population), backend=_Scripted([2, 4, 5]), session=shared_session()
    )
    # the undamaged run renders (and the report's imports are warm before the timed cases)
    run_cli(["report", str(out), "-o", str(root / "base.html")])
    return out


def _config(out: Path, population: Path) -> Any:
    from psymetrics_core.administer.config import RunConfig

    return RunConfig.from_options(limit=4, output=out, population=population, sample=3)


def _group(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def apply(results: dict[str, Any]) -> None:
        edit(results["tasks"]["bfi"]["population"][0])

    return apply


def _set(results: dict[str, Any], value: Any) -> None:
    results["tasks"]["bfi"]["population"] = value


def _more_respondents(g: dict[str, Any]) -> None:
    g["n_respondents"] = g["n_cells"] + 1


def _more_degenerate(g: dict[str, Any]) -> None:
    g["n_degenerate"] = g["n_cells"] + 5


def _task(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def apply(results: dict[str, Any]) -> None:
        edit(results["tasks"]["bfi"])

    return apply


def _first_cell_counts(e: dict[str, Any]) -> None:
    """The task level as it was before issue 32: respondent 1's counts, not the sums."""
    e["n_items"] = e["runs"][0]["n_items"]


CASES: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("task-counts-of-the-first-cell", _task(_first_cell_counts), "n_items"),
    ("task-answered-not-the-sum", _task(lambda e: e.update(n_answered=0)), "n_answered"),
    ("task-condition-a-respondent", _task(lambda e: e.update(condition="r1")), "condition"),
    ("not-a-list", lambda r: _set(r, "all"), "population"),
    ("empty-group", lambda r: _set(r, [{}]), "population.0"),
    ("more-respondents-than-cells", _group(_more_respondents), "n_respondents"),
    ("more-degenerate-than-cells", _group(_more_degenerate), "n_degenerate"),
    ("negative-n", _group(lambda g: g["scales"]["extraversion"].update(n=-1)), "population.0"),
    ("huge-mean", _group(lambda g: g["scales"]["extraversion"].update(mean=1e308)), "mean"),
    ("unknown-field", _group(lambda g: g.update(surprise=1)), "surprise"),
    ("missing-n-cells", _group(lambda g: g.pop("n_cells")), "n_cells"),
    (
        "n-fired-text",
        _group(lambda g: g["indicators"]["parse_rate"].update(n_fired="x")),
        "n_fired",
    ),
    ("scales-a-list", _group(lambda g: g.update(scales=[1, 2])), "scales"),
]


def _damaged(base: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    run = tmp_path / "run"
    shutil.copytree(base, run)
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    edit(results)
    (run / "results.json").write_text(json.dumps(results), encoding="utf-8")
    return run


def test_the_base_run_has_its_population_entry(base_run: Path, tmp_path: Path) -> None:
    from psymetrics_core.export.tidy import export_table

    results = json.loads((base_run / "results.json").read_text(encoding="utf-8"))
    (group,) = results["tasks"]["bfi"]["population"]
    assert group["n_cells"] == 3 and set(group["indicators"]) >= {"parse_rate"}
    assert export_table("population", [base_run], "csv", tmp_path / "p.csv")[1] > 0


@pytest.mark.parametrize("name, edit, field", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("command", ["report", "export population", "export scores"])
def test_fuzz_population_entry(
    base_run: Path, tmp_path: Path, name: str, edit: Any, field: str, command: str
) -> None:
    run = _damaged(base_run, tmp_path, edit)
    out_file = tmp_path / ("r.html" if command == "report" else "t.csv")
    argv = [*command.split(), str(run), "-o", str(out_file)]
    out = expect_clean_error(lambda: run_cli(argv), ["results.json"], label=f"{command} {name}")
    assert field in out.message, out.message
    assert not out_file.exists()
