"""ASI: key and schema against the published key.

Source of the key: Glick & Fiske (1996), as tabulated in Jung et al. (2026) Table 11 (psymetrics
seed notes 002 §2.1): HS = 2, 4, 5, 7*, 10, 11, 14, 15, 16, 18*, 21*; BS = 1, 3*, 6*, 8, 9, 12,
13*, 17, 19, 20, 22; * = reverse-keyed (x' = 5 - x on 0-5); scale scores are means.
"""

from __future__ import annotations

from psymetrics_core import get_instrument

HOSTILE = {2, 4, 5, 7, 10, 11, 14, 15, 16, 18, 21}
BENEVOLENT = {1, 3, 6, 8, 9, 12, 13, 17, 19, 20, 22}
REVERSE = {3, 6, 7, 13, 18, 21}

# r_zero answers 0 everywhere: only the reversed items score (5 - 0 = 5).
#   hostile: reversed 7, 18, 21 -> 3 * 5 = 15 over 11 items = 15/11
#   benevolent: reversed 3, 6, 13 -> 15/11; total = 30/22
# r_cycle answers item i with i mod 6 (1:1 2:2 3:3 4:4 5:5 6:0 7:1 8:2 9:3 10:4 11:5 12:0 13:1
#   14:2 15:3 16:4 17:5 18:0 19:1 20:2 21:3 22:4):
#   hostile: 2 + 4 + 5 + (5-1) + 4 + 5 + 2 + 3 + 4 + (5-0) + (5-3) = 40 -> 40/11
#   benevolent: 1 + (5-3) + (5-0) + 2 + 3 + 0 + (5-1) + 5 + 1 + 2 + 4 = 29 -> 29/11
#   total: (40 + 29) / 22 = 69/22
RESPONSES = {
    "r_zero": {str(i): 0 for i in range(1, 23)},
    "r_cycle": {str(i): i % 6 for i in range(1, 23)},
}
EXPECTED = {
    "r_zero": {"hostile": 15 / 11, "benevolent": 15 / 11, "total": 30 / 22},
    "r_cycle": {"hostile": 40 / 11, "benevolent": 29 / 11, "total": 69 / 22},
}


def test_asi_hand_scored_original(check_key):
    check_key("asi", RESPONSES, EXPECTED)


def test_asi_hand_scored_alternate_form(check_key):
    # the alternate form is keyed like the original, so the same answers give the same scores
    check_key("asi", RESPONSES, EXPECTED, form="alternate")


def test_asi_missing_answer_left_out_of_the_mean(check_key):
    # r_cycle without item 2 (value 2): hostile = (40 - 2) / 10, total = (69 - 2) / 21
    answers = {**RESPONSES["r_cycle"], "2": None}
    check_key("asi", {"r": answers}, {"r": {"hostile": 38 / 10, "total": 67 / 21}})


def test_asi_schema_matches_the_notes():
    inst = get_instrument("asi")
    assert set(inst.forms) == {"original", "alternate"}
    for form in inst.forms:
        items = inst.forms[form]
        assert len(items) == 22
        assert {int(it.id) for it in inst.scale_items("hostile", form)} == HOSTILE
        assert {int(it.id) for it in inst.scale_items("benevolent", form)} == BENEVOLENT
        assert len(inst.scale_items("total", form)) == 22
        assert {int(it.id) for it in items if it.reverse} == REVERSE
        assert all(inst.response_scale_for(it).values() == [0, 1, 2, 3, 4, 5] for it in items)


def test_asi_alternate_erratum_items_4_and_5():
    alt = {it.id: it.text for it in get_instrument("asi").forms["alternate"]}
    # Table 14's row "4" paraphrases item 5 (seed 002 ambiguity A4)
    assert alt["5"] == "Women have a tendency to be too quick to take offense."
    assert alt["4"].startswith("Many women tend to perceive harmless comments")
