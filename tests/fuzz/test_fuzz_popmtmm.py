"""Fuzz cases of the multitrait-multimethod trait table (``psym analyze RUN --mtmm FILE``,
issue 25): malformed tables, special files and options that do not fit; each case must end in
one line naming the file and the field (or the option)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness import expect_clean_error, run_cli
from test_fuzz_population_files import population_run  # noqa: F401 -- the fixture

from psymetrics_core.analysis.population.mtmm import load_trait_table, mtmm

# table text -> expected fragment (after the file name)
TABLES: dict[str, tuple[bytes, str]] = {
    "empty-file": (b"", "expected a mapping with a non-empty 'traits' mapping"),
    "top-level-list": (b"- extraversion\n", "expected a mapping with a non-empty 'traits'"),
    "no-traits-key": (b"pairs: {}\n", "expected a mapping with a non-empty 'traits'"),
    "traits-list": (b"traits: [extraversion]\n", "expected a mapping with a non-empty 'traits'"),
    "traits-empty": (b"traits: {}\n", "expected a mapping with a non-empty 'traits'"),
    "trait-string": (b"traits:\n  e: bfi\n", "traits.e: expected a mapping TASK: SCALE"),
    "trait-null": (b"traits:\n  e:\n", "traits.e: expected a mapping TASK: SCALE, got None"),
    "trait-empty-map": (b"traits:\n  e: {}\n", "traits.e: expected a mapping TASK: SCALE"),
    "trait-name-number": (
        b"traits:\n  3: {bfi: extraversion}\n",
        "traits.3: a trait name must be a non-empty printable string",
    ),
    "trait-name-newline": (
        b'traits:\n  "a\\nb": {bfi: extraversion}\n',
        "traits.a\\nb: a trait name must be",
    ),
    "scale-number": (b"traits:\n  e: {bfi: 3}\n", "traits.e.bfi: expected TASK: SCALE"),
    "scale-null": (b"traits:\n  e: {bfi: null}\n", "traits.e.bfi: expected TASK: SCALE"),
    "scale-blank": (b"traits:\n  e: {bfi: ' '}\n", "traits.e.bfi: expected TASK: SCALE"),
    "scale-mapping": (b"traits:\n  e: {bfi: {scale: x}}\n", "traits.e.bfi: expected TASK"),
    "task-number": (b"traits:\n  e: {1: x}\n", "traits.e.1: expected TASK: SCALE"),
    "scale-twice": (
        b"traits:\n  e: {bfi: x}\n  n: {bfi: x}\n",
        "traits.n.bfi: scale 'x' is already the scale of trait 'e'",
    ),
    "yaml-syntax": (b"traits: {e: [\n", "line 2: invalid YAML"),
    "not-utf8": (b"traits:\n  \xff: {bfi: x}\n", "UTF-8"),
    "alias-bomb": (
        b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
        b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c]\n"
        b"traits: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
        "",
    ),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_fuzz_mtmm_table(tmp_path: Path, name: str) -> None:
    raw, expect = TABLES[name]
    path = tmp_path / "traits.yaml"
    path.write_bytes(raw)
    out = expect_clean_error(lambda: load_trait_table(path), [str(path)], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo"])
def test_fuzz_mtmm_special_files(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "traits.yaml"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    out = expect_clean_error(lambda: load_trait_table(path), [str(path)], label=kind)
    assert "trait table" in out.message, out.message


def test_fuzz_mtmm_unknown_scale_of_a_present_task() -> None:
    """A table naming a scale the task does not have (the engine sees the task's scores)."""
    from psymetrics_core.analysis.population.mtmm import TraitTable

    scores = {m: pd.DataFrame(np.eye(4), columns=["e", "n", "o", "c"]) for m in ("A", "B")}
    table = TraitTable({"e": {"A": "e", "B": "e"}, "n": {"A": "n", "B": "neuro"}}, "t.yaml")
    out = expect_clean_error(lambda: mtmm(scores, table), ["t.yaml"], label="unknown scale")
    assert "t.yaml: traits.n.B: task B has no scale 'neuro' (its scales: e, n, o, c)" in (
        out.message
    )


CLI = [
    # name, extra arguments (TABLE = a good table file, RUN = the population run), fragment
    (
        "cli-unknown-scale",
        ["RUN", "--mtmm", "BADSCALE"],
        "traits.e.bfi: task bfi has no scale 'extra'",
    ),
    ("cli-missing-file", ["RUN", "--mtmm", "NOFILE"], "no such trait table file"),
    (
        "cli-with-responses",
        ["--task", "bfi", "--responses", "LONG", "--mtmm", "TABLE"],
        "applies to population run directories, not to --responses",
    ),
    (
        "cli-not-a-population-run",
        ["PLAIN", "--mtmm", "TABLE"],
        "no run here was given to a population",
    ),
]


@pytest.fixture(scope="module")
def warm_run(population_run: Path) -> Path:  # noqa: F811
    """The population run, analysed once so that the timed cases do not pay for the first
    import of the analysis libraries."""
    run_cli(["analyze", str(population_run), "--json"])
    return population_run


@pytest.mark.parametrize(("name", "args", "expect"), CLI, ids=[c[0] for c in CLI])
def test_fuzz_analyze_mtmm(
    tmp_path: Path, name: str, args: list[str], expect: str, warm_run: Path
) -> None:
    table = tmp_path / "t.yaml"
    table.write_text("traits:\n  e: {bfi: extraversion, pb-bfi: extraversion}\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("traits:\n  e: {bfi: extra, pb-bfi: extraversion}\n")
    long = tmp_path / "long.csv"
    long.write_text("respondent,item,response\nr1,1,3\n")
    where = {
        "RUN": str(warm_run),
        "TABLE": str(table),
        "BADSCALE": str(bad),
        "NOFILE": str(tmp_path / "none.yaml"),
        "LONG": str(long),
    }
    if "PLAIN" in args:
        where["PLAIN"] = str(_plain_run(tmp_path))
    argv = ["analyze", *(where.get(a, a) for a in args)]
    out = expect_clean_error(lambda: run_cli(argv), [expect], label=name)
    assert expect in out.message, out.message


def _plain_run(tmp_path: Path) -> Path:
    """A run directory of bfi without a population (the loopback server)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.latency_server import LatencyServer

    run = tmp_path / "plain"
    with LatencyServer(latency=0.0) as srv:
        run_cli(
            [
                "eval",
                "--tasks",
                "bfi",
                "--limit",
                "3",
                "--model",
                "openai-chat",
                "--model-args",
                f"base_url={srv.base_url},model=m",
                "-o",
                str(run),
            ]
        )
    return run
