"""BFI-10: key, agreement with the BFI-44, question texts.

Source of the key, checked by hand: Rammstedt & John (2007), Journal of Research in Personality
41, 203-212, Appendix (English BFI-10) and its scoring: extraversion 1R, 6; agreeableness 2, 7R;
conscientiousness 3R, 8; neuroticism 4R, 9; openness 5R, 10; R = 6 - x on 1-5; trait = mean of
its two items. Song et al.'s (2025) surveys/BFI10.json tags the same traits and reverse items.
"""

from __future__ import annotations

import csv

from psymetrics_core import get_instrument

KEY = {
    "extraversion": {1, 6},
    "agreeableness": {2, 7},
    "conscientiousness": {3, 8},
    "neuroticism": {4, 9},
    "openness": {5, 10},
}
REVERSE = {1, 3, 4, 5, 7}
# Each BFI-10 item is a BFI-44 item (Rammstedt & John, 2007, Table 1; John & Srivastava, 1999)
IN_BFI44 = {1: 6, 2: 22, 3: 23, 4: 9, 5: 41, 6: 36, 7: 2, 8: 3, 9: 39, 10: 20}

# r_cycle answers item i with ((i - 1) mod 5) + 1: 1:1 2:2 3:3 4:4 5:5 6:1 7:2 8:3 9:4 10:5
#   extraversion: (6-1) + 1 = 6 -> 3.0; agreeableness: 2 + (6-2) = 6 -> 3.0;
#   conscientiousness: (6-3) + 3 = 6 -> 3.0; neuroticism: (6-4) + 4 = 6 -> 3.0;
#   openness: (6-5) + 5 = 6 -> 3.0 (every trait 3.0: a reverse key applied twice or not at all
#   would break it)
# r_high answers 5 to the forward items and 1 to the reverse ones: every trait 5.0
RESPONSES = {
    "r_cycle": {str(i): (i - 1) % 5 + 1 for i in range(1, 11)},
    "r_high": {str(i): 1 if i in REVERSE else 5 for i in range(1, 11)},
    "r_e_only": {"1": 2, "6": 4},
}
EXPECTED = {
    "r_cycle": {t: 3.0 for t in KEY},
    "r_high": {t: 5.0 for t in KEY},
    # (6-2) + 4 = 8 -> 4.0; the other traits unanswered
    "r_e_only": {"extraversion": 4.0},
}


def test_bfi10_hand_scored(check_key):
    lib, _ = check_key("bfi10", RESPONSES, EXPECTED)
    assert lib["r_e_only"]["openness"] is None


def test_bfi10_schema_matches_rammstedt_john():
    inst = get_instrument("bfi10")
    assert inst.texts_shipped
    assert [it.id for it in inst.items] == [str(i) for i in range(1, 11)]
    for name, ids in KEY.items():
        assert {int(it.id) for it in inst.scale_items(name)} == ids
    assert {int(it.id) for it in inst.items if it.reverse} == REVERSE
    assert inst.response_scales["default"].values() == [1, 2, 3, 4, 5]


def test_bfi10_items_are_the_bfi44_items():
    """Text, trait and keying of every BFI-10 item equal those of its BFI-44 item."""
    short = {int(it.id): it for it in get_instrument("bfi10").items}
    long = {int(it.id): it for it in get_instrument("bfi").items}
    for i, j in IN_BFI44.items():
        assert (short[i].text, short[i].scales, short[i].reverse) == (
            long[j].text,
            long[j].scales,
            long[j].reverse,
        ), (i, j)


def test_bfi10_question_column():
    inst = get_instrument("bfi10")
    with (inst.spec_path.parent / inst.form_files["original"]).open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["id"] for r in rows] == [it.id for it in inst.items]
    assert rows[0]["question"] == "Are you reserved?"
    for r in rows:
        q = r["question"]
        assert q.endswith("?") and q.split()[0] in {"Are", "Do"} and " you " in q, q
