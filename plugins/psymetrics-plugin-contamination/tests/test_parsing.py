"""Answer parsers: hand-made answers with the outcome the reimplementation notes' §4 prescribes."""

from __future__ import annotations

import pytest
from psymetrics_plugin_contamination.parsing import (
    INVALID,
    normalize_keyword,
    parse_dimension,
    parse_keyword,
    parse_option,
    parse_scores,
    parse_verbatim,
)

BFI_DIMS = ["Extraversion", "Agreeableness", "Conscientiousness", "Neuroticism", "Openness"]
BFI_IDS = ["extraversion", "agreeableness", "conscientiousness", "neuroticism", "openness"]
MFQ_DIMS = [
    "Care/harm",
    "Fairness/reciprocity",
    "Ingroup/loyalty",
    "Authority/respect",
    "Purity/sanctity",
]
MFQ_IDS = ["care", "fairness", "loyalty", "authority", "purity"]
BFI_OPTIONS = [
    "Disagree strongly",
    "Disagree a little",
    "Neither agree nor disagree",
    "Agree a little",
    "Agree strongly",
]
PVQ_OPTIONS = [
    "not like me at all",
    "not like me",
    "a little like me",
    "somewhat like me",
    "like me",
    "very much like me",
]


def test_verbatim_keeps_refusals_and_strips_only_whitespace() -> None:
    p = parse_verbatim("  I'm sorry, I can't reproduce copyrighted text.\n")
    assert p.value == "I'm sorry, I can't reproduce copyrighted text." and p.status == "refused"
    assert parse_verbatim('1. "Is talkative"').value == '1. "Is talkative"'
    assert parse_verbatim('1. "Is talkative"', "quotes_numbering").value == "Is talkative"
    assert parse_verbatim("<think>hmm</think>Is talkative").value == "Is talkative"
    assert parse_verbatim("").status == "empty"


def test_keyword_first_line_without_quotes_and_punctuation() -> None:
    assert parse_keyword('"Reserved."\nBecause...').value == "Reserved"
    assert parse_keyword("   ").status == "empty"
    assert normalize_keyword("Self-Disciplined") == normalize_keyword("selfdisciplined")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Extraversion", "Extraversion"),
        ("extraversion.", "Extraversion"),
        ("The answer is Openness", "Openness"),
        ("Extraversion or Neuroticism", INVALID),  # two labels named
        ("Introversion", INVALID),
        ("", INVALID),
    ],
)
def test_dimension_labels(answer: str, expected: str) -> None:
    assert parse_dimension(answer, BFI_DIMS, BFI_IDS).value == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Care/harm", "Care/harm"),
        ("Harm/Care", "Care/harm"),  # reversed pair (notes §4 aliases)
        ("Care harm", "Care/harm"),  # punctuation dropped as the prompt demands
        ("CareHarm", "Care/harm"),
        ("In-group/Loyalty", "Ingroup/loyalty"),  # "Loyalty" is one part of the pair
        ("Loyalty", "Ingroup/loyalty"),
        ("Purity/sanctity", "Purity/sanctity"),
    ],
)
def test_dimension_labels_with_punctuation(answer: str, expected: str) -> None:
    assert parse_dimension(answer, MFQ_DIMS, MFQ_IDS).value == expected


def test_scores_accept_commas_and_decimals() -> None:
    assert parse_scores("5, 4, 3, 2, 1").value == [5, 4, 3, 2, 1]
    assert parse_scores("4,2.5,1").value == [4, 2.5, 1]
    assert parse_scores("I cannot help with that").status == "refused"
    assert parse_scores("none").status == "invalid"


@pytest.mark.parametrize(
    ("answer", "index"),
    [
        ("Agree strongly", 4),
        ("Disagree strongly", 0),  # "agree strongly" inside "disagree strongly" is not a hit
        ("I choose: Disagree a little.", 1),
        ("agree strongly or disagree strongly", None),  # two options named
        ("3", None),  # numbers are off by default
    ],
)
def test_option_labels_never_match_inside_longer_labels(answer: str, index: int | None) -> None:
    assert parse_option(answer, BFI_OPTIONS).value == index


def test_pvq_like_me_collisions() -> None:
    assert parse_option("Not like me", PVQ_OPTIONS).value == 1
    assert parse_option("It is a little like me.", PVQ_OPTIONS).value == 2
    assert parse_option("Like me", PVQ_OPTIONS).value == 4
    assert parse_option("3", PVQ_OPTIONS, numeric=True).value == 2
