"""Fuzz the interview's new inputs: the judge's reply (untrusted model text) and the run
directory ``psym judge`` reads.

Whatever the judge replies, reading it returns (never raises) in bounded time, and every item is
either one of the options or missing with a one-line reason; a valid reply mutated so that an
item's value leaves the options, is given twice differently or is dropped leaves exactly that
item unread. A malformed interview run (no results, broken JSON lines, a wrong ``interview``
field, an unknown item or task) makes ``psym judge`` fail with one line naming the file or field,
and never writes the output.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psymetrics_core.administer.administration.interview_judge import read_ratings, said_lines
from tests.administer.interview_server import InterviewServer, Persona
from tests.administer.test_interview import ANN, _eval, _questions
from tests.fuzz.harness import expect_clean_error, run_cli

IDS = ["1", "2", "3", "A4", "E10"]
VALUES = [1, 2, 3, 4, 5]
VALID = "Analysis: fine.\n1: 4\n2: none\n3: 1\nA4: 5\nE10: 2"
TIME_BOUND = 5.0


def _check(text: str) -> dict[str, tuple[int | None, str | None]]:
    t0 = time.monotonic()
    got = read_ratings(said_lines(text), IDS, VALUES)
    assert time.monotonic() - t0 < TIME_BOUND, f"slow on {text[:80]!r}"
    assert list(got) == IDS
    for value, why in got.values():
        if value is not None:
            assert value in VALUES and why is None
        else:
            assert why and "\n" not in why
    return got


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_reply_gives_options_or_reasons(text: str) -> None:
    _check(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["1", "A4", "E10", ":", "=", " ", "none", "5", "6", "0", "\n", "*", "-"]),
        max_size=60,
    )
)
def test_reply_like_pieces_give_options_or_reasons(pieces: list[str]) -> None:
    _check("".join(pieces))


def test_the_valid_reply_reads_every_item() -> None:
    assert _check(VALID) == {
        "1": (4, None),
        "2": (None, "none"),
        "3": (1, None),
        "A4": (5, None),
        "E10": (2, None),
    }


@pytest.mark.parametrize(
    ("mutated", "why"),
    [
        (VALID.replace("3: 1", "3: 6"), "'6' is not one of"),
        (VALID.replace("3: 1", "3: 0"), "'0' is not one of"),
        (VALID.replace("3: 1", "3: 1\n3: 2"), "2 different ratings"),
        (VALID.replace("3: 1\n", ""), "no line for item 3"),
        (VALID.replace("3: 1", "3: agree"), "'agree' is not one of"),
        (VALID.replace("3: 1", "3: 2.5"), "'2.5' is not one of"),
    ],
)
def test_a_mutated_item_is_unread_and_the_others_kept(mutated: str, why: str) -> None:
    got = _check(mutated)
    assert got["3"][0] is None and why in str(got["3"][1])
    assert got["1"] == (4, None) and got["E10"] == (2, None)


# -- psym judge on malformed runs ------------------------------------------------------------


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[InterviewServer, Path]]:
    d = tmp_path_factory.mktemp("interview-fuzz")
    (d / "ann.txt").write_text("You are Ann.")
    with InterviewServer({"Ann": Persona(ANN)}, _questions()) as srv:
        res = _eval(srv, d / "run", d / "ann.txt", "interview")
        assert res.exit_code == 0, res.output
        yield srv, d / "run"


def _broken(src: Path, dst: Path, line: int, change) -> Path:
    shutil.copytree(src, dst)
    lines = (dst / "samples.jsonl").read_text().splitlines()
    lines[line] = change(lines[line])
    (dst / "samples.jsonl").write_text("\n".join(lines) + "\n")
    return dst


def _field(key: str, value: object):
    def change(text: str) -> str:
        row = json.loads(text)
        node = row
        *path, last = key.split(".")
        for k in path:
            node = node[k]
        node[last] = value
        return json.dumps(row)

    return change


CASES = [
    ("not json", 2, lambda _t: "{not json", ["samples.jsonl", "line 3"]),
    ("an array", 0, lambda _t: "[1, 2]", ["samples.jsonl", "line 1"]),
    ("interview a string", 1, _field("interview", "yes"), ["interview"]),
    ("rating status", 1, _field("interview.rating.status", "maybe"), ["status"]),
    ("rating attempts", 1, _field("interview.rating.attempts", -1), ["attempts"]),
    ("impute", 1, _field("interview.impute", "mean"), ["impute"]),
    ("question missing", 1, _field("interview", {"method": "x"}), ["question"]),
    ("unknown item", 4, _field("item", "999"), ["999"]),
    ("unknown task", 0, _field("task", "no-such-task"), ["no-such-task"]),
]


@pytest.mark.parametrize(("label", "line", "change", "names"), CASES, ids=[c[0] for c in CASES])
def test_a_malformed_run_is_one_line_and_writes_nothing(
    run: tuple[InterviewServer, Path], tmp_path: Path, label, line, change, names
) -> None:
    srv, src = run
    bad = _broken(src, tmp_path / "bad", line, change)
    out = tmp_path / "out"
    argv = ["judge", str(bad), "--judge", "openai-chat", "--judge-model-args"]
    argv += [f"base_url={srv.base_url},model=judge", "-o", str(out)]
    expect_clean_error(lambda: run_cli(argv), names, label=label)
    assert not (out / "results.json").exists()


@pytest.mark.parametrize(
    ("what", "names"),
    [
        ("missing", ["results.json"]),
        ("results not json", ["results.json"]),
        ("no samples", ["samples.jsonl"]),
    ],
)
def test_a_missing_or_broken_run_directory_is_one_line(
    run: tuple[InterviewServer, Path], tmp_path: Path, what: str, names: list[str]
) -> None:
    _, src = run
    bad = tmp_path / "bad"
    if what != "missing":
        shutil.copytree(src, bad)
        if what == "results not json":
            (bad / "results.json").write_text("{")
        else:
            (bad / "samples.jsonl").unlink()
    argv = ["judge", str(bad), "--judge", "openai-chat", "-o", str(tmp_path / "out")]
    expect_clean_error(lambda: run_cli(argv), names, label=what)
    assert not (tmp_path / "out" / "results.json").exists()
