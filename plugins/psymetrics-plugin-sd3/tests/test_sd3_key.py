"""SD3: key and schema.

Source of the key: Jones & Paulhus (2014), as tabulated in psymetrics seed notes 000 §2.4:
Machiavellianism 1-9, Narcissism 10-18, Psychopathy 19-27; reverse-keyed Narcissism #2, #6, #8
(ids 11, 15, 17) and Psychopathy #2, #7 (ids 20, 25), x' = 6 - x on 1-5; scale = mean.
"""

from __future__ import annotations

from psymetrics_core import get_instrument

# r_fives answers 5 everywhere: mach 5; narc 6*5 + 3*(6-5) = 33 -> 33/9;
#   psych 7*5 + 2*(6-5) = 37 -> 37/9
# r_cycle answers item i with ((i - 1) mod 5) + 1:
#   mach items 1-9: 1+2+3+4+5+1+2+3+4 = 25 -> 25/9
#   narc 10:5, 11:1R->5, 12:2, 13:3, 14:4, 15:5R->1, 16:1, 17:2R->4, 18:3 = 28 -> 28/9
#   psych 19:4, 20:5R->1, 21:1, 22:2, 23:3, 24:4, 25:5R->1, 26:1, 27:2 = 19 -> 19/9
RESPONSES = {
    "r_fives": {str(i): 5 for i in range(1, 28)},
    "r_cycle": {str(i): (i - 1) % 5 + 1 for i in range(1, 28)},
}
EXPECTED = {
    "r_fives": {"machiavellianism": 5.0, "narcissism": 33 / 9, "psychopathy": 37 / 9},
    "r_cycle": {"machiavellianism": 25 / 9, "narcissism": 28 / 9, "psychopathy": 19 / 9},
}


def test_sd3_hand_scored(check_key):
    check_key("sd3", RESPONSES, EXPECTED)


def test_sd3_schema_matches_the_notes():
    inst = get_instrument("sd3")
    assert not inst.texts_shipped
    assert len(inst.items) == 27
    assert {int(i.id) for i in inst.scale_items("machiavellianism")} == set(range(1, 10))
    assert {int(i.id) for i in inst.scale_items("narcissism")} == set(range(10, 19))
    assert {int(i.id) for i in inst.scale_items("psychopathy")} == set(range(19, 28))
    assert {int(i.id) for i in inst.items if i.reverse} == {11, 15, 17, 20, 25}
