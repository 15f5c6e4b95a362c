"""Fuzz: ``psym report --criterion`` (the population section's options): each bad value ends
in one clear line naming the option, the scale or the label, never a traceback and never a
report that silently ignores the option."""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path

import pytest
from harness import expect_clean_error, run_cli


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """bfi items 1-10 given to 6 binary profiles, and to the model without a population."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.latency_server import LatencyServer

    base = tmp_path_factory.mktemp("popreport")
    pop = base / "big5.jsonl"
    run_cli(["population", "build", "--generate", "binary", "--n", "6", "-o", str(pop)])
    with LatencyServer(latency=0.0) as srv:  # model "hash": not the shared cache's "m" answers
        model = ["--model", "openai-chat", "--model-args", f"base_url={srv.base_url},model=hash"]
        run_cli(
            [
                "eval",
                "--tasks",
                "bfi",
                "--limit",
                "10",
                "--population",
                str(pop),
                *model,
                "-o",
                str(base / "pop"),
            ]
        )
        run_cli(["eval", "--tasks", "bfi", "--limit", "3", *model, "-o", str(base / "plain")])
    import_module("psymetrics_core.cli.report_cmd")  # its imports before the timed cases
    return {"pop": base / "pop", "plain": base / "plain"}


@pytest.mark.parametrize(
    ("name", "run", "value", "expect"),
    [
        ("criterion-no-equals", "pop", "extraversion", "expected SCALE=FIELD"),
        ("criterion-empty-scale", "pop", "=extraversion", "expected SCALE=FIELD"),
        ("criterion-unknown-scale", "pop", "grit=age", "no scale 'grit'"),
        ("criterion-unknown-label", "pop", "extraversion=nope", "no label 'nope'"),
        (
            "criterion-not-a-population-run",
            "plain",
            "extraversion=extraversion",
            "no run here was given to a population",
        ),
    ],
)
def test_fuzz_report_criterion(
    runs: dict[str, Path], tmp_path: Path, name: str, run: str, value: str, expect: str
) -> None:
    argv = ["report", str(runs[run]), "-o", str(tmp_path / "r.html"), "--criterion", value]
    out = expect_clean_error(lambda: run_cli(argv), [expect], label=name)
    assert expect in out.message and "--criterion" in out.message, out.message
    assert not (tmp_path / "r.html").exists()  # no page written on bad input


@pytest.mark.parametrize(
    ("name", "run", "args", "expect"),
    [
        ("group-unknown-label", "pop", ["--group", "region"], "--group region: not model"),
        (
            "group-not-a-population-run",
            "plain",
            ["--group", "model"],
            "no run here was given to a population",
        ),
        ("efa-zero", "pop", ["--efa", "0"], "expected a number of factors >= 1 or auto"),
        ("efa-word", "pop", ["--efa", "many"], "expected a number of factors >= 1 or auto"),
        ("rotation-without-efa", "pop", ["--rotation", "varimax"], "give --efa N|auto too"),
        ("cfa-model-missing", "pop", ["--cfa-model", "absent.lav"], "absent.lav"),
        ("cfa-model-unknown-task", "pop", ["--cfa-model", "mfq=MODEL"], "no population task 'mfq'"),
        ("mtmm-missing", "pop", ["--mtmm", "absent.yaml"], "absent.yaml"),
        ("irt-not-a-population-run", "plain", ["--irt"], "no run here was given to a population"),
        ("missing-unknown-policy", "pop", ["--missing", "mice"], "'mice' is not one of"),
        ("missing-empty", "pop", ["--missing", ""], "'' is not one of"),
        ("deletion-fiml", "pop", ["--deletion", "fiml"], "'fiml' is not one of"),
        (
            "deletion-and-missing-differ",
            "pop",
            ["--deletion", "pairwise", "--missing", "fiml"],
            "--deletion is the old name of --missing",
        ),
        ("pa-unknown-kind", "pop", ["--pa", "both"], "'both' is not one of"),
        (
            "pa-not-a-population-run",
            "plain",
            ["--pa", "components"],
            "no run here was given to a population",
        ),
    ],
)
def test_fuzz_report_population_options(
    runs: dict[str, Path], tmp_path: Path, name: str, run: str, args: list[str], expect: str
) -> None:
    """The analyses' options of ``psym report`` (shared with ``psym analyze``): one line each,
    and no page written."""
    model = tmp_path / "m.lav"
    model.write_text("F =~ 1 + 2 + 3\n")
    args = [
        a.replace("MODEL", str(model)).replace("absent", str(tmp_path / "absent")) for a in args
    ]
    argv = ["report", str(runs[run]), "-o", str(tmp_path / "r.html"), *args]
    out = expect_clean_error(lambda: run_cli(argv), [], label=name)
    assert expect in out.message, (name, out.message)
    assert not (tmp_path / "r.html").exists()
