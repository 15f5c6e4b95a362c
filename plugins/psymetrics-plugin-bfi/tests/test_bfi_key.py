"""BFI-44: key and schema.

Source of the key: John & Srivastava (1999) BFI scoring key (psymetrics seed notes 000 §2.1):
E 1, 6R, 11, 16, 21R, 26, 31R, 36; A 2R, 7, 12R, 17, 22, 27R, 32, 37R, 42; C 3, 8R, 13, 18R, 23R,
28, 33, 38, 43R; N 4, 9R, 14, 19, 24R, 29, 34R, 39; O 5, 10, 15, 20, 25, 30, 35R, 40, 41R, 44;
R = 6 - x on 1-5; scale = mean.
"""

from __future__ import annotations

from psymetrics_core import get_instrument

KEY = {
    "extraversion": {1, 6, 11, 16, 21, 26, 31, 36},
    "agreeableness": {2, 7, 12, 17, 22, 27, 32, 37, 42},
    "conscientiousness": {3, 8, 13, 18, 23, 28, 33, 38, 43},
    "neuroticism": {4, 9, 14, 19, 24, 29, 34, 39},
    "openness": {5, 10, 15, 20, 25, 30, 35, 40, 41, 44},
}
REVERSE = {2, 6, 8, 9, 12, 18, 21, 23, 24, 27, 31, 34, 35, 37, 41, 43}

# r_fives answers 5 everywhere; reversed items score 1:
#   E: 5 forward * 5 + 3 reversed * 1 = 28 -> 28/8; A: 5*5 + 4*1 = 29 -> 29/9;
#   C: 5*5 + 4*1 = 29 -> 29/9; N: 5*5 + 3*1 = 28 -> 28/8; O: 8*5 + 2*1 = 42 -> 42/10
# r_cycle answers item i with ((i - 1) mod 5) + 1 (1:1 2:2 3:3 4:4 5:5 6:1 ... 41:1 42:2 43:3 44:4):
#   E: 1 + (6-1) + 1 + 1 + (6-1) + 1 + (6-1) + 1 = 20 -> 2.5
#   A: (6-2) + 2 + (6-2) + 2 + 2 + (6-2) + 2 + (6-2) + 2 = 26 -> 26/9
#   C: 3 + (6-3) + 3 + (6-3) + (6-3) + 3 + 3 + 3 + (6-3) = 27 -> 3.0
#   N: 4 + (6-4) + 4 + 4 + (6-4) + 4 + (6-4) + 4 = 26 -> 3.25
#   O: 5 + 5 + 5 + 5 + 5 + 5 + (6-5) + 5 + (6-1) + 4 = 45 -> 4.5
RESPONSES = {
    "r_fives": {str(i): 5 for i in range(1, 45)},
    "r_cycle": {str(i): (i - 1) % 5 + 1 for i in range(1, 45)},
}
EXPECTED = {
    "r_fives": {
        "extraversion": 28 / 8,
        "agreeableness": 29 / 9,
        "conscientiousness": 29 / 9,
        "neuroticism": 28 / 8,
        "openness": 42 / 10,
    },
    "r_cycle": {
        "extraversion": 2.5,
        "agreeableness": 26 / 9,
        "conscientiousness": 3.0,
        "neuroticism": 3.25,
        "openness": 4.5,
    },
}


def test_bfi_hand_scored(check_key):
    check_key("bfi", RESPONSES, EXPECTED)


def test_bfi_schema_matches_the_notes():
    inst = get_instrument("bfi")
    assert len(inst.items) == 44
    for name, ids in KEY.items():
        assert {int(it.id) for it in inst.scale_items(name)} == ids
    assert {int(it.id) for it in inst.items if it.reverse} == REVERSE
