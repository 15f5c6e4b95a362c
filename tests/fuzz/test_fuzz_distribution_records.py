"""Fuzz: the records of issue 34's model distributions, edited so that they still parse but claim
what no run wrote: ``results.json``'s ``distribution`` and ``samples.jsonl``'s ``stated_shares``
and ``option_mass``. Each edit must end in one ``PsymError`` line naming the file and the field,
whether the run is read for ``psym report`` or by the run reader alone."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error

from psymetrics_core.api import session_or_default
from psymetrics_core.base.types import Completion


class _Stating:
    """States 20% per option for verbalized prompts (a fake model, unit tests only)."""

    def identity(self) -> dict[str, Any]:
        return {"backend": "stating"}

    def generate(self, prompts: Any, settings: Any, reporter: Any = None) -> list[Completion]:
        return [Completion(text="\n".join(f"{o.value} = 20%" for o in p.options)) for p in prompts]


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from psymetrics_core import evaluate

    out = tmp_path_factory.mktemp("dist") / "run"
    evaluate(["bfi"], backend=_Stating(), limit=3, conditions=["verbalized"], output=out)
    return out


def _results(fn: Callable[[dict[str, Any]], None]) -> Callable[[bytes], bytes]:
    def edit(raw: bytes) -> bytes:
        data = json.loads(raw)
        fn(data)
        return json.dumps(data).encode()

    return edit


def _dist(field: str, value: Any) -> Callable[[bytes], bytes]:
    return _results(lambda d: d["distribution"]["verbalized"].__setitem__(field, value))


def _sample(field: str, value: Any) -> Callable[[bytes], bytes]:
    def edit(raw: bytes) -> bytes:
        lines = raw.decode().splitlines()
        row = json.loads(lines[0])
        row[field] = value
        lines[0] = json.dumps(row)
        return ("\n".join(lines) + "\n").encode()

    return edit


CASES = [
    ("method-unknown", "results.json", _dist("method", "guessed"), "distribution.verbalized"),
    ("field-unknown", "results.json", _dist("field", "completion"), "distribution.verbalized"),
    ("per-item-negative", "results.json", _dist("per_item", -1), "per_item"),
    ("temperature-nan", "results.json", _dist("temperature", "NaN"), "temperature"),
    ("extra-key", "results.json", _dist("shares", {}), "distribution.verbalized"),
    (
        "not-a-mapping",
        "results.json",
        _results(lambda d: d.update(distribution=[1])),
        "distribution",
    ),
    ("share-above-one", "samples.jsonl", _sample("stated_shares", {"1": 1.5}), "stated_shares"),
    ("share-negative", "samples.jsonl", _sample("stated_shares", {"1": -0.2}), "stated_shares"),
    ("share-key-text", "samples.jsonl", _sample("stated_shares", {"agree": 0.2}), "stated_shares"),
    ("share-nan", "samples.jsonl", _sample("stated_shares", {"1": "NaN"}), "stated_shares"),
    ("mass-above-one", "samples.jsonl", _sample("option_mass", 1.7), "option_mass"),
    ("mass-negative", "samples.jsonl", _sample("option_mass", -0.1), "option_mass"),
    ("shares-dropped", "samples.jsonl", _sample("stated_shares", None), "n_answered"),
]


def _read(run: Path, out: Path) -> Any:
    from psymetrics_core.records.read import load_run_data

    return load_run_data(run)


def _report(run: Path, out: Path) -> Any:
    from psymetrics_core.report import write_report

    return write_report([run], out, session=session_or_default())


def test_the_base_run_reads(base_run: Path, tmp_path: Path) -> None:
    _read(base_run, tmp_path)
    _report(base_run, tmp_path / "r.html")


@pytest.mark.parametrize(("name", "fname", "edit", "expect"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("command", [_read, _report], ids=["reader", "report"])
def test_a_damaged_distribution_record_is_one_line(
    base_run: Path, tmp_path: Path, name: str, fname: str, edit: Any, expect: str, command: Any
) -> None:
    run = tmp_path / "run"
    shutil.copytree(base_run, run)
    target = run / fname
    target.write_bytes(edit(target.read_bytes()))
    out = expect_clean_error(lambda: command(run, tmp_path / "r.html"), [fname], label=name)
    assert expect in out.message, out.message
    assert not (tmp_path / "r.html").exists()
