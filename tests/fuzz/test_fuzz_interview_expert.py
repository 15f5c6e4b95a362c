"""Fuzz the expert rating's new inputs: the judge's reply (untrusted model text), the
``--impute`` option of ``psym eval`` and ``psym judge``, and an expert run's samples as
``psym judge`` reads them.

Whatever the judge replies, reading it returns (never raises) in bounded time either a score in
the range or a one-line reason; a valid reply mutated so that the score leaves the range, is
given twice differently or is dropped is unread with that reason. A bad ``--impute`` or one
without an interview condition is one line naming the option, nothing written; a malformed
expert run makes ``psym judge`` fail with one line, and never writes the output.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psymetrics_core.administer.administration.interview_expert_judge import (
    read_score,
    said_scores,
)
from tests.administer.interview_server import InterviewServer, Persona
from tests.administer.test_interview import ANN, _eval, _questions
from tests.fuzz.harness import expect_clean_error, run_cli
from tests.fuzz.test_fuzz_interview import _field

VALID = "Analysis: the answers show a lively person.\nSCORE: 4.5"
TIME_BOUND = 5.0


def _check(text: str, lo: int = 1, hi: int = 5) -> tuple[float | None, str | None]:
    t0 = time.monotonic()
    score, why = read_score(said_scores(text), lo, hi)
    assert time.monotonic() - t0 < TIME_BOUND, f"slow on {text[:80]!r}"
    if score is not None:
        assert lo <= score <= hi and why is None
    else:
        assert why and "\n" not in why
    return score, why


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_reply_gives_a_score_in_range_or_a_reason(text: str) -> None:
    _check(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["SCORE", "score", ":", "=", " ", "none", "3", "5.5", "-1", "\n", "**"]),
        max_size=60,
    )
)
def test_reply_like_pieces_give_a_score_or_a_reason(pieces: list[str]) -> None:
    _check("".join(pieces))


def test_the_valid_reply_is_read() -> None:
    assert _check(VALID) == (4.5, None)


@pytest.mark.parametrize(
    ("mutated", "why"),
    [
        (VALID.replace("4.5", "9"), "9 is outside 1-5"),
        (VALID.replace("4.5", "-2"), "-2 is outside 1-5"),
        (VALID.replace("4.5", "1e9"), "'1e9' is not a number"),
        (VALID.replace("4.5", "4/5"), "'4/5' is not a number"),
        (VALID + "\nSCORE: 2", "2 different scores"),
        (VALID.replace("SCORE: 4.5", "I'd say 4.5"), "no 'SCORE: X' line"),
        (VALID.replace("4.5", "high"), "'high' is not a number"),
        (VALID.replace("4.5", "nan"), "'nan' is not a number"),
        (VALID.replace("4.5", "inf"), "'inf' is not a number"),
    ],
)
def test_a_mutated_reply_is_unread_with_its_reason(mutated: str, why: str) -> None:
    score, got = _check(mutated)
    assert score is None and why in str(got), got


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["eval", "--tasks", "bfi", "--impute", "mean"], ["--impute", "mean"]),
        (["eval", "--tasks", "bfi", "--impute", ""], ["--impute"]),
        (["eval", "--tasks", "bfi", "--impute", "midpoint"], ["--impute", "no interview"]),
        (["judge", "x", "--judge", "openai-chat", "-o", "y", "--impute", "zero"], ["--impute"]),
    ],
)
def test_a_bad_impute_is_one_line(tmp_path: Path, argv: list[str], names: list[str]) -> None:
    out = tmp_path / "run"
    argv = [a if a != "y" else str(out) for a in argv]
    if argv[0] == "eval":
        argv += ["-o", str(out)]
    expect_clean_error(lambda: run_cli(argv), names, label=" ".join(argv))
    assert not (out / "results.json").exists()


# -- psym judge on malformed expert runs -------------------------------------------------------


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[InterviewServer, Path]]:
    d = tmp_path_factory.mktemp("expert-fuzz")
    (d / "ann.txt").write_text("You are Ann.")
    with InterviewServer({"Ann": Persona(ANN)}, _questions()) as srv:
        res = _eval(srv, d / "run", d / "ann.txt", "interview-expert", "--limit", "12")
        assert res.exit_code == 0, res.output
        yield srv, d / "run"


CASES = [
    ("completion a number", _field("completion", 5), ["completion"]),
    ("interview method empty", _field("interview.method", 7), ["method"]),
    ("administration unknown", _field("facets.administration", "interview-nope"), ["nope"]),
    ("administration not an interview", _field("facets.administration", "battery"), ["battery"]),
    ("impute unknown", _field("interview.impute", "median"), ["impute"]),
]


@pytest.mark.parametrize(("label", "change", "names"), CASES, ids=[c[0] for c in CASES])
def test_a_malformed_expert_run_is_one_line_and_writes_nothing(
    run: tuple[InterviewServer, Path], tmp_path: Path, label, change, names
) -> None:
    srv, src = run
    bad = tmp_path / "bad"
    shutil.copytree(src, bad)
    lines = (bad / "samples.jsonl").read_text().splitlines()
    lines[0] = change(lines[0])
    (bad / "samples.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    argv = ["judge", str(bad), "--judge", "openai-chat", "--judge-model-args"]
    argv += [f"base_url={srv.base_url},model=judge", "-o", str(out)]
    expect_clean_error(lambda: run_cli(argv), names, label=label)
    assert not (out / "results.json").exists()
