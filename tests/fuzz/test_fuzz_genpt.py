"""Fuzz suite, GenPT analysis (issue 24 item 7): the new options of ``psym projective-analyze``
and ``analyse`` (``--unparsed``, the bounded ``--n-boot``), the repeat index it now groups by,
and the answered-item counts the authors' minimum rule reads.

Bad options and repeat fields end in one clear line (``harness.expect_clean_error`` for the
library, one ``Error:`` / ``psym: error:`` line and a non-zero exit for the command line); an
odd answered-item count leaves the questionnaire profile out with its reason, never a crash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error, shared_session

from psymetrics_core.cli import main

pytest.importorskip("psymetrics_plugin_projective")

from psymetrics_plugin_projective.analysis import (  # noqa: E402
    MAX_BOOT,
    MAX_REPEATS,
    analyse,
    load_predictions,
    predictions_from_results,
)

TRAITS = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")


def _results(repeat: Any = 0) -> dict[str, Any]:
    run = {
        "facets": {"persona": "persona=ann"},
        "repeat": repeat,
        "scales": {"dx.depression": {"score": 1}},
    }
    return {
        "model": "m",
        "judge": {"model": "j", "model_args": {}},
        "tasks": {"sct": {"runs": [run]}},
    }


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(_results()), encoding="utf-8")
    return run


# -- command-line options ------------------------------------------------------------------------

NBOOT = "--n-boot must be an integer in 1-100,000"  # the bounds table (base/bounds.py)

CLI_OPTIONS = [
    ("unparsed-empty", ["--unparsed", ""], "Invalid value for '--unparsed'"),
    ("unparsed-upper-case", ["--unparsed", "AUTHORS"], "Invalid value for '--unparsed'"),
    ("unparsed-default-word", ["--unparsed", "default"], "Invalid value for '--unparsed'"),
    ("unparsed-number", ["--unparsed", "0"], "Invalid value for '--unparsed'"),
    ("unparsed-long", ["--unparsed", "x" * 10_000], "Invalid value for '--unparsed'"),
    ("unparsed-newline", ["--unparsed", "authors\nmissing"], "Invalid value for '--unparsed'"),
    ("n-boot-zero", ["--n-boot", "0"], NBOOT),
    ("n-boot-negative", ["--n-boot", "-5"], NBOOT),
    ("n-boot-above-bound", ["--n-boot", str(MAX_BOOT + 1)], NBOOT),
    ("n-boot-huge", ["--n-boot", "1" + "0" * 40], NBOOT),
    ("n-boot-text", ["--n-boot", "many"], NBOOT),
    ("n-boot-float", ["--n-boot", "2.5"], NBOOT),
    ("n-boot-nan", ["--n-boot", "nan"], NBOOT),
]


@pytest.mark.parametrize("name, args, expect", CLI_OPTIONS, ids=[c[0] for c in CLI_OPTIONS])
def test_fuzz_projective_analyze_options(
    run_dir: Path, capsys: pytest.CaptureFixture[str], name: str, args: list[str], expect: str
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["projective-analyze", str(run_dir), *args], session=shared_session())
    err = capsys.readouterr().err
    assert stop.value.code not in (0, None), f"{name}: exit 0"
    assert "Traceback" not in err, f"{name}: {err[-2000:]}"
    lines = [ln for ln in err.splitlines() if ln.startswith(("Error:", "psym: error"))]
    assert len(lines) == 1 and expect in lines[0], f"{name}: {err[-1000:]}"
    assert len(lines[0]) < 400, f"{name}: message too long"


# -- library options -----------------------------------------------------------------------------

LIB_OPTIONS = [
    ("lib-unparsed-none", {"unparsed": None}, "--unparsed"),
    ("lib-unparsed-empty", {"unparsed": ""}, "--unparsed"),
    ("lib-unparsed-title-case", {"unparsed": "Authors"}, "--unparsed"),
    ("lib-unparsed-int", {"unparsed": 3}, "--unparsed"),
    ("lib-unparsed-huge", {"unparsed": "y" * 100_000}, "--unparsed"),
    ("lib-n-boot-zero", {"n_boot": 0}, "--n-boot"),
    ("lib-n-boot-negative", {"n_boot": -1}, "--n-boot"),
    ("lib-n-boot-above-bound", {"n_boot": MAX_BOOT + 1}, "--n-boot"),
    ("lib-n-boot-huge", {"n_boot": 10**40}, "--n-boot"),
    ("lib-n-boot-bool", {"n_boot": True}, "--n-boot"),
    ("lib-n-boot-float", {"n_boot": 2.5}, "--n-boot"),
    ("lib-n-boot-string", {"n_boot": "100"}, "--n-boot"),
]


@pytest.mark.parametrize("name, kwargs, expect", LIB_OPTIONS, ids=[c[0] for c in LIB_OPTIONS])
def test_fuzz_analyse_options(name: str, kwargs: dict[str, Any], expect: str) -> None:
    preds = predictions_from_results(_results(), "run")
    out = expect_clean_error(lambda: analyse(preds, **kwargs), [expect], label=name)
    assert len(out.message) < 400


# -- the repeat index of a results record --------------------------------------------------------

REPEATS = [
    ("repeat-negative", -1),
    ("repeat-text", "abc"),
    ("repeat-number-text", "1"),
    ("repeat-huge", 10**40),
    ("repeat-at-bound", MAX_REPEATS),
    ("repeat-bool", True),
    ("repeat-float", 1.5),
    ("repeat-object", {"r": 1}),
    ("repeat-list", [1]),
]


@pytest.mark.parametrize("name, repeat", REPEATS, ids=[c[0] for c in REPEATS])
def test_fuzz_repeat_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, repeat: Any
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(_results(repeat)), encoding="utf-8")
    expect_clean_error(lambda: load_predictions([run]), ["results.json", "repeat"], label=name)
    with pytest.raises(SystemExit) as stop:
        main(["projective-analyze", str(run)], session=shared_session())
    err = capsys.readouterr().err
    assert stop.value.code not in (0, None) and "Traceback" not in err, f"{name}: {err[-2000:]}"
    lines = [ln for ln in err.splitlines() if ln.startswith(("Error:", "psym: error"))]
    assert len(lines) == 1 and "repeat" in lines[0], f"{name}: {err[-1000:]}"


# -- answered-item counts read by the minimum rule: the profile is left out with its reason ------

ANSWERED = [
    ("bfi-answered-string", "bfi", "30", "no answered-item count"),
    ("bfi-answered-null", "bfi", None, "no answered-item count"),
    ("bfi-answered-bool", "bfi", True, "no answered-item count"),
    ("bfi-answered-float", "bfi", 30.0, "no answered-item count"),
    ("bfi-answered-negative", "bfi", -5, "outside 0-44"),
    ("bfi-answered-above-items", "bfi", 45, "outside 0-44"),
    ("bfi-answered-huge", "bfi", 10**40, "outside 0-44"),
    ("bfi-answered-29", "bfi", 29, "below the authors' minimum of 30"),
    ("pb-bfi-answered-0", "pb-bfi", 0, "below the authors' minimum of 30"),
    ("16p-answered-39", "16p", 39, "below the authors' minimum of 40"),
    ("16p-answered-above-items", "16p", 61, "outside 0-60"),
    ("16p-answered-list", "16p", [40], "no answered-item count"),
]


@pytest.mark.parametrize("name, task, answered, reason", ANSWERED, ids=[c[0] for c in ANSWERED])
def test_fuzz_answered_counts(name: str, task: str, answered: Any, reason: str) -> None:
    if task == "16p":
        scales = {n: {"score": 60} for n in ("extraverted", "intuitive", "thinking", "judging")}
    else:
        scales = {t: {"score": 3.5} for t in TRAITS}
    run = {
        "facets": {"persona": "persona=ann"},
        "repeat": 0,
        "scales": scales,
        "n_answered": answered,
    }
    report = analyse(predictions_from_results({"model": "m", "tasks": {task: {"runs": [run]}}}))
    (excluded,) = report.excluded
    assert reason in excluded.reason and len(excluded.reason) < 300, name
    assert not report.validity and not report.reliability
