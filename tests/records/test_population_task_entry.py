"""A population run's ``tasks.<task>`` describes the whole population (issue 32, item 5): its
counts are the sums over every respondent cell, its parse rate is over every item administered,
each scale's score is the population entry's mean, and nothing at the task level names
respondent 1 (``records.population_task``). The expected values are counted here from
samples.jsonl's lines, independently of the code under test."""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import cli
from psymetrics_core.records.read import read_results

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.latency_server import LatencyServer  # noqa: E402


def _answer(messages: list[dict[str, str]]) -> str:
    """A refusal to "talkative", an unparseable answer to "reserved" (every respondent); else
    "5" for an extroverted persona and "2" for the others."""
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    user = messages[-1]["content"]
    if "talkative" in user:
        return "I'm sorry, I cannot answer that."
    if "is reserved" in user:
        return "banana"
    return "5" if "extroverted" in system else "2"


def _run(root: Path, *extra: str) -> dict[str, Any]:
    pop, run = root / "pop.jsonl", root / "run"
    res = CliRunner().invoke(cli, ["population", "build", "--generate", "binary", "-o", str(pop)])
    assert res.exit_code == 0, res.output
    with LatencyServer(latency=0.0, answer=_answer) as srv:
        args = ["eval", "--tasks", "bfi", "--limit", "10", "--population", str(pop)]
        args += ["--sample", "6", "--model", "openai-chat", "-o", str(run), *extra]
        args += ["--model-args", f"base_url={srv.base_url},model=m"]
        res = CliRunner().invoke(cli, args, terminal_width=200)
    assert res.exit_code == 0, res.output
    results = json.loads((run / "results.json").read_text())
    lines = [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]
    return {"results": results, "lines": lines, "run": run, "screen": res.output}


@pytest.fixture(scope="module")
def population(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(tmp_path_factory.mktemp("poptask"))


def test_task_counts_are_the_sums_over_every_cell(population: dict[str, Any]) -> None:
    entry = population["results"]["tasks"]["bfi"]
    status = Counter(x["parse_status"] for x in population["lines"])
    cells = {(x["condition"], x["repeat"]) for x in population["lines"]}
    assert len(cells) == 6 and len(entry["runs"]) == 6
    n = len(population["lines"])
    assert n == 60  # 6 respondents x 10 items
    # each respondent refuses item 1 (talkative) and gives no number to item 6 (reserved)
    assert (status["ok"], status["unparsed"], status["refused"]) == (48, 6, 6)
    assert entry["n_items"] == n
    assert entry["n_answered"] == status["ok"]
    assert entry["n_unparsed"] == status["unparsed"]
    assert entry["n_refused"] == status["refused"]
    assert entry["parse_rate"] == pytest.approx(48 / 60)
    # one cell's counts are a tenth of these: the task level is not respondent 1's cell
    assert entry["runs"][0]["n_items"] == 10 and entry["runs"][0]["n_answered"] == 8


def test_task_scales_are_the_population_means(population: dict[str, Any]) -> None:
    entry = population["results"]["tasks"]["bfi"]
    (group,) = entry["population"]
    for name, scale in entry["scales"].items():
        scores = [r["scales"][name]["score"] for r in entry["runs"]]
        present = [s for s in scores if s is not None]
        expected = statistics.fmean(present) if present else None
        assert scale["score"] == pytest.approx(expected) == group["scales"][name]["mean"]
        assert scale["n_answered"] == sum(r["scales"][name]["n_answered"] for r in entry["runs"])
        assert "z" not in scale and "z" not in (scale.get("norm") or {})  # one respondent's z
    # the answered items of extraversion, counted from the lines (item keys by the record)
    ext = [x for x in population["lines"] if "extraversion" in (x.get("keyed") or {})]
    answered = sum(x["parse_status"] == "ok" for x in ext)
    assert entry["scales"]["extraversion"]["n_answered"] == answered


def test_nothing_at_the_task_level_names_respondent_1(population: dict[str, Any]) -> None:
    entry = population["results"]["tasks"]["bfi"]
    first = entry["runs"][0]["condition"]
    assert first.startswith("respondent=")
    top = {k: v for k, v in entry.items() if k not in ("runs", "population")}
    assert first not in json.dumps(top)
    assert (entry["condition"], entry["facets"]) == ("population", {})
    # the indicators of one answer pattern are the population entry's distributions instead
    assert "straight_lining" not in entry["indicators"]
    assert "straight_lining" in entry["population"][0]["indicators"]
    # the record reads back under the schema (the validator checks the sums)
    path = population["run"] / "results.json"
    assert read_results(path, schema=True)["tasks"]["bfi"]["n_items"] == 60


def test_a_first_cell_task_entry_of_a_population_is_refused(
    population: dict[str, Any], tmp_path: Path
) -> None:
    """The record as it was before: the task level copied from respondent 1's cell."""
    results = population["results"]
    entry = results["tasks"]["bfi"]
    old = {**entry, **{k: entry["runs"][0][k] for k in ("n_items", "n_answered", "condition")}}
    (tmp_path / "results.json").write_text(json.dumps({**results, "tasks": {"bfi": old}}))
    with pytest.raises(PsymError, match="'n_items' .10. of a population run is not its sum"):
        read_results(tmp_path / "results.json", schema=True)


def test_a_single_model_run_keeps_its_first_administration(tmp_path: Path) -> None:
    with LatencyServer(latency=0.0, answer=_answer) as srv:
        args = ["eval", "--tasks", "bfi", "--limit", "10", "--repeats", "2", "--model"]
        args += ["openai-chat", "-o", str(tmp_path / "run")]
        args += ["--model-args", f"base_url={srv.base_url},model=m"]
        res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    entry = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]["bfi"]
    assert entry["n_items"] == entry["runs"][0]["n_items"] == 10
    assert entry["condition"] == "original" and "population" not in entry
    assert "straight_lining" in entry["indicators"]
