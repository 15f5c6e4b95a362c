"""Fuzz cases of ``psym population build`` (issue 25 newcomer trial): every source id that
``psym eval --population`` would refuse is refused by the build, as one line naming the source
file, the row and the rule (records.population.id_problem, the one rule); --levels where it
means nothing is one line too. Each id that passes the build is read back by the reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error

from psymetrics_core.records.population import read_population
from psymetrics_core.study.population import BuildSpec, build_population, write_population

BAD_IDS: dict[str, Any] = {
    "slash": "é/ü",
    "backslash": "a\\b",
    "tab": "a\tb",
    "newline": "a\nb",
    "carriage-return": "a\rb",
    "blank": "   ",
    "too-long": "x" * 201,
    "number-with-slash": "1/2",
}


@pytest.mark.parametrize("name", sorted(BAD_IDS))
def test_fuzz_build_id(tmp_path: Path, name: str) -> None:
    src = tmp_path / "src.jsonl"
    src.write_text(json.dumps({"id": BAD_IDS[name], "persona": "a chef"}) + "\n")
    out = expect_clean_error(
        lambda: build_population(BuildSpec(source=src)), [str(src)], label=name
    )
    assert f"{src}, row 1: field 'id'" in out.message and "id rule" in out.message


GOOD_IDS = {"unicode": "é-ü", "spaces": "a b", "number": 7, "dots": "a.b", "max-length": "y" * 200}


@pytest.mark.parametrize("name", sorted(GOOD_IDS))
def test_fuzz_build_id_read_back(tmp_path: Path, name: str) -> None:
    src, pop = tmp_path / "src.jsonl", tmp_path / "pop.jsonl"
    src.write_text(json.dumps({"id": GOOD_IDS[name], "persona": "a chef"}) + "\n")
    write_population(pop, build_population(BuildSpec(source=src)))
    assert read_population(pop)[0].id == str(GOOD_IDS[name])


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("levels-with-binary", {"generate": "binary", "levels": (1, 5)}),
        ("levels-with-source", {"source": Path("x.jsonl"), "levels": (1, 9)}),
    ],
)
def test_fuzz_build_levels(name: str, spec: dict[str, Any]) -> None:
    out = expect_clean_error(lambda: build_population(BuildSpec(**spec)), ["--levels"], label=name)
    assert "only with --generate trait-markers" in out.message
