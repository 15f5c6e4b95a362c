"""Fuzz the verbalized reply parser (``stated_shares.parse_stated_shares``): a model's reply is
untrusted input. Whatever the reply, the parser returns (never raises) in bounded time, and its
result is one of two shapes: every option named with shares summing to 1 (``ok``), or no shares
and a one-line reason (``unparsed`` / ``refused``). A valid reply mutated so that an option is
missing, doubled, renamed or the total pushed out of 90-110% never parses."""

from __future__ import annotations

import math
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psymetrics_core.administer.administration.stated_shares import parse_stated_shares
from psymetrics_core.base.types import Option

OPTIONS = [
    Option(1, "Disagree strongly"),
    Option(2, "Disagree a little"),
    Option(3, "Neither agree nor disagree"),
    Option(4, "Agree a little"),
    Option(5, "Agree strongly"),
]
VALID = "1 = 10%\n2 = 20%\n3 = 40%\n4 = 20%\n5 = 10%"
TIME_BOUND = 5.0  # seconds per reply (linear in the reply; generous on a loaded 2-core machine)


def _check_shape(text: str) -> None:
    t0 = time.monotonic()
    got = parse_stated_shares(text, OPTIONS)
    assert time.monotonic() - t0 < TIME_BOUND, f"slow on {text[:80]!r}"
    if got.status == "ok":
        assert got.shares is not None and got.reason is None
        assert list(got.shares) == [o.value for o in OPTIONS]
        assert all(0.0 <= s <= 1.0 and math.isfinite(s) for s in got.shares.values())
        assert math.isclose(sum(got.shares.values()), 1.0, abs_tol=1e-9)
        assert 0.9 <= got.stated_total <= 1.1
    else:
        assert got.status in ("unparsed", "refused")
        assert got.shares is None and got.reason and "\n" not in got.reason


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_gives_shares_or_a_reason(text):
    _check_shape(text)


_PIECES = st.sampled_from(
    [
        "1",
        "2",
        "3",
        "5",
        "6",
        "-1",
        "=",
        ":",
        " - ",
        "%",
        "percent",
        "\n",
        ", ",
        "; ",
        "(",
        ")",
        "Agree strongly",
        "agree a little",
        "Disagree",
        "Total",
        "option",
        "33.3",
        "100",
        "0.2",
        "**",
        "{",
        "}",
        '"',
        "1e9",
        "９",
        "½",
        "\t",
        " ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=60))
def test_replies_built_from_reply_like_pieces_give_shares_or_a_reason(pieces):
    _check_shape("".join(pieces))


def _as_fractions(text: str) -> str:
    """The valid reply's percentages written as fractions (0.1 for 10%)."""
    return text.replace("%", "").replace("10", "0.1").replace("20", "0.2").replace("40", "0.4")


def _mutations(rng: random.Random) -> list[tuple[str, str]]:
    lines = VALID.splitlines()
    drop = rng.randrange(5)
    double = rng.randrange(5)
    return [
        ("\n".join(lines[:drop] + lines[drop + 1 :]), "no share for option"),
        ("\n".join(lines + [lines[double]]), "is given twice"),
        (VALID.replace("3 = 40%", "3 = 10%"), "outside 90-110%"),
        (VALID.replace("3 = 40%", "3 = 70%"), "outside 90-110%"),
        (VALID.replace(f"{double + 1} =", "7 ="), "names no option"),
        (VALID.replace(f"{double + 1} =", "Somewhat ="), "names no option"),
        (_as_fractions(VALID), "fractions?"),
        ("\n".join(rng.sample(["10%", "20%", "40%", "20%", "10%"], 5)), "no 'option = percentage'"),
    ]


@pytest.mark.parametrize("seed", range(20))
def test_a_valid_reply_mutated_never_parses(seed):
    assert parse_stated_shares(VALID, OPTIONS).status == "ok"
    for text, reason in _mutations(random.Random(seed)):
        got = parse_stated_shares(text, OPTIONS)
        assert got.status == "unparsed", (text, got)
        assert reason in got.reason, (text, got.reason)


def test_a_huge_reply_is_bounded():
    _check_shape(VALID + "\n" + "Agree strongly: 10%, " * 20_000)
    _check_shape("9" * 100_000 + "%")
    _check_shape("1 = " + "1" * 5000 + "%")
