"""Fuzz the interview's newer inputs: the ``question`` column of a user's ``--items`` file, the
log-probabilities a scoring judge returns (``--condition interview-logprob``) and the judge
replies option conversion now reads leniently (labels, ``ID - VALUE``, ``Item ID: ...``).

A malformed items file (an empty or blank question, a row short of the column) fails with one
line naming the file, the row and the field; whatever numbers a judge backend returns for the
scored replies (too few, too many, nan, infinities, ties), reading them returns a rating or an
unread reason in one line, never an exception.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import expect_clean_error, run_cli, shared_session
from hypothesis import given, settings
from hypothesis import strategies as st

from psymetrics_core.administer.administration.interview_judge import (
    Exchange,
    read_ratings,
    said_lines,
)
from psymetrics_core.administer.administration.interview_logprob import (
    read_scores,
    score_prompt,
)
from psymetrics_core.base.types import Prompt
from psymetrics_core.instruments.item_texts import apply_item_texts
from tests.administer.interview_server import InterviewServer, Persona
from tests.administer.test_interview import ANN, _eval, _questions


def _rows(question: str, at: int) -> str:
    lines = ["id,text,question"]
    for i in range(1, 28):
        lines.append(f"{i},Statement {i},{question if i == at else f'Question {i}?'}")
    return "\n".join(lines) + "\n"


ITEMS_CASES = [
    ("empty question", _rows("", 3), ["row 4", "'question'", "empty question"]),
    ("blank question", _rows("   ", 27), ["row 28", "'question'", "empty question"]),
    ("quoted blank", _rows('" "', 1), ["row 2", "'question'", "empty question"]),
    (
        "short row",
        _rows("Q?", 1).replace("5,Statement 5,Question 5?", "5,Statement 5"),
        ["row 6", "'question'"],
    ),
]


@pytest.mark.parametrize(("label", "text", "names"), ITEMS_CASES, ids=[c[0] for c in ITEMS_CASES])
def test_a_malformed_question_column_is_one_line(
    tmp_path: Path, label: str, text: str, names: list[str]
) -> None:
    inst = shared_session().get_instrument("sd3")
    p = tmp_path / "sd3.csv"
    p.write_text(text)
    out = expect_clean_error(lambda: apply_item_texts(inst, p), [str(p)], label=label)
    for name in names:
        assert name in out.message, out.message


@functools.cache
def _prompt() -> Prompt:
    inst = shared_session().get_instrument("bfi")
    it = inst.items[0]
    options = inst.response_scales[it.response_scale].options
    return score_prompt(Exchange(it, str(it.question), "Yes."), options)


def _check(lps: list[float]) -> None:
    prompt = _prompt()
    replies = [o.continuation for o in prompt.options]
    v = read_scores(prompt, lps)
    if v.ok:
        assert v.value["rating"] in replies
        assert len(lps) == len(replies) and all(math.isfinite(x) for x in lps)
        assert lps[replies.index(v.value["rating"])] == max(lps)
    else:
        assert v.value is None and v.reason and "\n" not in v.reason


FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -1.0, -1.0, float("-inf"), float("nan")]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(FLOATS, max_size=9))
def test_any_scores_give_a_rating_or_a_reason(lps: list[float]) -> None:
    _check(lps)


@pytest.mark.parametrize(
    ("lps", "why"),
    [
        ([-1.0, -1.0, -2.0, -3.0, -4.0, -5.0], "a tie between 1 and 2"),
        ([-1.0, -2.0, -3.0, -4.0, -5.0], "scored 5 of the 6 replies"),
        ([-1.0, float("nan"), -3.0, -4.0, -5.0, -6.0], "no finite log-probability for 2"),
        ([-1.0, -2.0, -3.0, -4.0, float("-inf"), -6.0], "no finite log-probability for 5"),
        ([], "scored 0 of the 6 replies"),
    ],
)
def test_unreadable_scores_say_why(lps: list[float], why: str) -> None:
    prompt = _prompt()
    v = read_scores(prompt, lps)
    assert v.status == "unparsed" and why in str(v.reason)


# -- option conversion's lenient reading: labels, "ID - VALUE", "Item ID", comments ----------

IDS = ["1", "2", "3", "E10"]
VALUES = [1, 2, 3, 4, 5]
LABELS = [
    "Disagree strongly",
    "Disagree a little",
    "Neither agree nor disagree",
    "Agree a little",
    "Agree strongly",
]


def _read(text: str) -> dict[str, tuple[int | None, str | None]]:
    got = read_ratings(said_lines(text), IDS, VALUES, LABELS)
    assert list(got) == IDS
    for value, why in got.values():
        assert (value in VALUES and why is None) or (value is None and why and "\n" not in why)
    return got


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["1", "E10", ":", " - ", "=", " ", "none", "4", "6", "\n", "*", "Item ", "ID ", "-"]
            + [lab.lower() for lab in LABELS]
            + LABELS
            + [".", "(", ")", " or ", "/", ","]
        ),
        max_size=60,
    )
)
def test_any_reply_with_labels_gives_options_or_reasons(pieces: list[str]) -> None:
    _read("".join(pieces))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2: Agree a little", (4, None)),
        ("2: agree strongly.", (5, None)),
        ('2: "Neither agree nor disagree"', (3, None)),
        ("Item 2: 1", (1, None)),
        ("ID 2: **4**", (4, None)),
        ("2 - 2", (2, None)),
        ("- **2**: 5", (5, None)),
        ("2: 4 (agree a little)", (4, None)),
        ("2: none of the options fit", (None, "none")),
    ],
)
def test_lenient_readings(line: str, expected: tuple[int | None, str | None]) -> None:
    assert _read(f"Analysis.\n1: 3\n{line}\nE10: 5")["2"] == expected


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("2: agree", "'agree' is not one of 1, 2, 3, 4, 5 or their labels"),
        ("2: 4-5", "'4-5' could be two ratings"),
        ("2: 3 or 4", "'3 or 4' could be two ratings"),
        ("2 = Disagree a little", "option 2's label on line 2 (the options echoed?)"),
        ("2: Agree a little, mostly", "is not one of"),
        ("2. Agree a little", "no line for item 2"),
        ("2: 4\n2: Agree strongly", "2 different ratings"),
    ],
)
def test_ambiguous_lines_stay_unread(line: str, why: str) -> None:
    got = _read(f"1: 3\n{line}\nE10: 5")
    assert got["2"][0] is None and why in str(got["2"][1])
    assert got["1"] == (3, None) and got["E10"] == (5, None)


def test_the_options_echoed_rate_nothing() -> None:
    """SmolLM2-135M's reply to option conversion: the answer options, listed."""
    echo = "\n".join(f"{v} = {lab}" for v, lab in zip(VALUES, LABELS, strict=True))
    assert all(v is None for v, _ in _read(echo).values())
    listed = "\n".join(f"{v}. {lab}" for v, lab in zip(VALUES, LABELS, strict=True))
    assert all(v is None for v, _ in _read(listed).values())


# -- psym judge --method: a mode that is not an interview is one line, nothing written ---------


@pytest.fixture(scope="module")
def interview_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    d = tmp_path_factory.mktemp("method-fuzz")
    (d / "ann.txt").write_text("You are Ann.")
    with InterviewServer({"Ann": Persona(ANN)}, _questions()) as srv:
        res = _eval(srv, d / "run", d / "ann.txt", "interview")
        assert res.exit_code == 0, res.output
        yield srv.base_url, d / "run"


METHODS = ["", " ", "interview ", "INTERVIEW", "battery", "item-by-item", "x" * 2000, "a\nb"]


@pytest.mark.parametrize("method", METHODS, ids=[repr(m)[:20] for m in METHODS])
def test_a_bad_method_is_one_line(
    interview_run: tuple[str, Path], tmp_path: Path, method: str
) -> None:
    base_url, run = interview_run
    out = tmp_path / "out"
    argv = ["judge", str(run), "--judge", "openai-chat", "--judge-model-args"]
    argv += [f"base_url={base_url},model=judge", "--method", method, "-o", str(out)]
    expect_clean_error(
        lambda: run_cli(argv), ["--method", "not an interview mode"], label=method[:20]
    )
    assert not (out / "results.json").exists()
