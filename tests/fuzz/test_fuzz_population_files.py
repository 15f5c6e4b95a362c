"""Fuzz cases of the population inputs (issue 25): population files, persona sources, persona
templates and the population options of `psym eval`, `psym population build` and `psym
analyze`. Each malformed input ends in one PsymError line naming the file, line or option."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error, run_cli

from psymetrics_core.administer.population import respondent_conditions
from psymetrics_core.records.population import read_population
from psymetrics_core.study.population import BuildSpec, build_population

GOOD = {"id": "r1", "persona": "a nurse", "labels": {"age": 40}, "source": {}, "licence": ""}


def _line(**change: Any) -> str:
    return json.dumps({**GOOD, **change})


# population file text -> a fragment the one-line error must hold
POPULATION_FILES: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "no respondents"),
    "blank-lines": (b"\n\n\n", "no respondents"),
    "not-json": (b"{nope\n", "line 1"),
    "list-line": (b"[1, 2]\n", "expected a JSON object"),
    "number-line": (b"3\n", "expected a JSON object"),
    "unknown-field": (_line(extra=1).encode(), "unknown field"),
    "id-missing": (json.dumps({"persona": "x"}).encode(), "field 'id'"),
    "id-number": (_line(id=5).encode(), "field 'id'"),
    "id-empty": (_line(id="  ").encode(), "field 'id'"),
    "id-slash": (_line(id="a/b").encode(), "field 'id'"),
    "id-newline": (_line(id="a\nb").encode(), "field 'id'"),
    "id-huge": (_line(id="x" * 500).encode(), "field 'id'"),
    "persona-missing": (json.dumps({"id": "a"}).encode(), "field 'persona'"),
    "persona-empty": (_line(persona=" ").encode(), "field 'persona'"),
    "persona-number": (_line(persona=7).encode(), "field 'persona'"),
    "persona-huge": (_line(persona="x" * 30_000).encode(), "field 'persona'"),
    "labels-list": (_line(labels=[1]).encode(), "field 'labels'"),
    "label-object": (_line(labels={"a": {"b": 1}}).encode(), "field 'labels.a'"),
    "labels-too-many": (_line(labels={str(i): i for i in range(300)}).encode(), "field 'labels'"),
    "source-list": (_line(source=[]).encode(), "field 'source'"),
    "licence-number": (_line(licence=3).encode(), "field 'licence'"),
    "duplicate-id": ((_line() + "\n" + _line(persona="other")).encode(), "appears twice"),
    "not-utf8": (b'{"id": "\xff"}\n', "UTF-8"),
    "nested-deep": (b"[" * 100_000 + b"]" * 100_000, "line 1"),
}


@pytest.mark.parametrize("name", sorted(POPULATION_FILES))
def test_fuzz_population_file(tmp_path: Path, name: str) -> None:
    raw, expect = POPULATION_FILES[name]
    path = tmp_path / "pop.jsonl"
    path.write_bytes(raw)
    out = expect_clean_error(lambda: read_population(path), [str(path)], label=name)
    assert expect in out.message, out.message


def test_fuzz_population_special_files(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path, Path("/proc/self/environ"), tmp_path / "missing.jsonl"):
        expect_clean_error(lambda p=path: read_population(p), [str(path)], label=str(path))


# persona source (file name, bytes) -> fragment
SOURCES: dict[str, tuple[str, bytes, str]] = {
    "jsonl-list-line": ("p.jsonl", b"[1]\n", "expected a JSON object per persona"),
    "jsonl-not-json": ("p.jsonl", b"{x\n", "line 1"),
    "jsonl-no-text-field": ("p.jsonl", b'{"name": "a"}\n', "no persona text field"),
    "jsonl-text-number": ("p.jsonl", b'{"persona": 5}\n', "expected a non-empty text"),
    "jsonl-text-empty": ("p.jsonl", b'{"persona": "  "}\n', "expected a non-empty text"),
    "jsonl-text-huge": ("p.jsonl", json.dumps({"persona": "x" * 30_000}).encode(), "over"),
    "jsonl-same-id-two-personas": (
        "p.jsonl",
        b'{"id": 1, "persona": "a"}\n{"id": 1, "persona": "b"}\n',
        "used by two",
    ),
    "csv-no-text-column": ("p.csv", b"id,name\n1,a\n", "no persona text field"),
    "csv-nul": ("p.csv", b"persona\n\x00\n", "NUL"),
    "txt-not-utf8": ("p.txt", b"\xff\xfe persona\n", "UTF-8"),
    "txt-empty": ("p.txt", b"\n\n", "no personas"),
    "unknown-suffix": ("p.xlsx", b"x", "unknown persona source type"),
    "parquet-damaged": ("p.parquet", b"PAR1 not really", "not a readable Parquet file"),
    "folder-not-a-dataset": ("folder", b"", "not a dataset saved with save_to_disk"),
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_fuzz_persona_source(tmp_path: Path, name: str) -> None:
    fname, raw, expect = SOURCES[name]
    path = tmp_path / fname
    if fname == "folder":
        path.mkdir()
        (path / "x.txt").write_text("not a dataset")
        pytest.importorskip("datasets")
    else:
        path.write_bytes(raw)
    out = expect_clean_error(
        lambda: build_population(BuildSpec(source=path)), [str(path)], label=name
    )
    assert expect in out.message, out.message


@pytest.mark.parametrize(
    ("name", "spec", "expect"),
    [
        ("n-zero", {"generate": "binary", "n": 0}, "--n 0"),
        ("n-too-big", {"generate": "binary", "n": 10**9}, "--n"),
        ("levels-empty", {"generate": "trait-markers", "levels": ()}, "--levels"),
        ("levels-zero", {"generate": "trait-markers", "levels": (0,)}, "--levels"),
        ("generator-unknown", {"generate": "hexaco"}, "--generate"),
        ("both", {"generate": "binary", "source": Path("x.jsonl")}, "either"),
        ("stratify-missing-field", {"generate": "binary", "n": 4, "stratify": ("age",)}, "age"),
    ],
)
def test_fuzz_build_spec(name: str, spec: dict[str, Any], expect: str) -> None:
    out = expect_clean_error(lambda: build_population(BuildSpec(**spec)), [expect], label=name)
    assert expect in out.message


TEMPLATES = {
    "syntax-error": ("{% if %}", "line 1"),
    "undefined-label": ("{{ labels.nope }}", "respondent"),
    "unknown-name": (None, "not a built-in template"),
    "not-utf8": (b"\xff{{ persona }}", "UTF-8"),
}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_fuzz_persona_template(tmp_path: Path, name: str) -> None:
    pop = tmp_path / "pop.jsonl"
    pop.write_text(_line() + "\n")
    text, expect = TEMPLATES[name]
    template = "no-such-template"
    if text is not None:
        path = tmp_path / "t.j2"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        template = str(path)
    out = expect_clean_error(
        lambda: respondent_conditions(pop, template), ["template", template], label=name
    )
    assert expect in out.message, out.message


@pytest.mark.parametrize(
    ("name", "args", "expect"),
    [
        ("sample-zero", ["--sample", "0"], "--sample"),
        ("sample-text", ["--sample", "many"], "--sample"),
        ("sample-above-population", ["--sample", "5"], "--sample 5"),
        ("population-missing", None, "no such population file"),
        ("population-folder", "folder", "population"),
    ],
)
def test_fuzz_eval_population_options(tmp_path: Path, name: str, args: Any, expect: str) -> None:
    pop = tmp_path / "pop.jsonl"
    pop.write_text(_line() + "\n")
    target = tmp_path / "missing.jsonl" if args is None else tmp_path if args == "folder" else pop
    extra = args if isinstance(args, list) else []
    argv = [
        "eval",
        "--tasks",
        "bfi",
        "--population",
        str(target),
        *extra,
        "--model",
        "openai-chat",
        "--model-args",
        "base_url=http://127.0.0.1:9/v1,model=m",
        "-o",
        str(tmp_path / "run"),
    ]
    out = expect_clean_error(lambda: run_cli(argv), [expect], label=name)
    assert expect in out.message, out.message
    assert not (tmp_path / "run" / "results.json").exists()


@pytest.mark.parametrize(
    ("name", "values", "expect"),
    [
        ("criterion-no-equals", ["extraversion"], "expected SCALE=FIELD"),
        ("criterion-empty-field", ["extraversion="], "expected SCALE=FIELD"),
        ("criterion-unknown-scale", ["grit=age"], "no scale 'grit'"),
        ("criterion-unknown-label", ["extraversion=nope"], "no label 'nope'"),
    ],
)
def test_fuzz_analyze_criterion(
    tmp_path: Path, name: str, values: list[str], expect: str, population_run: Path
) -> None:
    argv = ["analyze", str(population_run)]
    for v in values:
        argv += ["--criterion", v]
    out = expect_clean_error(lambda: run_cli(argv), [expect], label=name)
    assert expect in out.message, out.message


@pytest.fixture(scope="module")
def population_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A population run of bfi for 6 binary profiles against the loopback server."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.latency_server import LatencyServer

    base = tmp_path_factory.mktemp("poprun")
    pop = base / "big5.jsonl"
    run_cli(["population", "build", "--generate", "binary", "--n", "6", "-o", str(pop)])
    with LatencyServer(latency=0.0) as srv:
        run_cli(
            [
                "eval",
                "--tasks",
                "bfi",
                "--limit",
                "10",
                "--population",
                str(pop),
                "--model",
                "openai-chat",
                "--model-args",
                f"base_url={srv.base_url},model=m",
                "-o",
                str(base / "run"),
            ]
        )
    return base / "run"
