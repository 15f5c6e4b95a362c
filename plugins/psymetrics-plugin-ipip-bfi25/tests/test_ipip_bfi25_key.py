"""IPIP bfi-25: key and items against psych's bfi.dictionary.

Source of the key: psychTools::bfi.dictionary (Revelle), column Keying: -1 for A1, C4, C5, E1, E2,
O2, O5 (and the N items, which it keys toward emotional stability; psych's bfi scores neuroticism
with N1-N5 forward, as here); reverse = 7 - x on 1-6; scale = mean of its five items.
"""

from __future__ import annotations

from psymetrics_core import get_instrument

REVERSE = {"A1", "C4", "C5", "E1", "E2", "O2", "O5"}
SCALES = {
    "agreeableness": "A",
    "conscientiousness": "C",
    "extraversion": "E",
    "neuroticism": "N",
    "openness": "O",
}

# r_sixes answers 6 everywhere; reversed items score 1:
#   A: 1 + 4*6 = 25 -> 5.0; C: 3*6 + 2*1 = 20 -> 4.0; E: 2*1 + 3*6 = 20 -> 4.0;
#   N: 5*6 = 30 -> 6.0; O: 3*6 + 2*1 = 20 -> 4.0
# r_step answers item Xi with i (1..5): A: (7-1) + 2 + 3 + 4 + 5 = 20 -> 4.0;
#   C: 1 + 2 + 3 + (7-4) + (7-5) = 11 -> 2.2; E: (7-1) + (7-2) + 3 + 4 + 5 = 23 -> 4.6;
#   N: 15 -> 3.0; O: 1 + (7-2) + 3 + 4 + (7-5) = 15 -> 3.0
IDS = [f"{d}{i}" for d in "ACENO" for i in range(1, 6)]
RESPONSES = {
    "r_sixes": dict.fromkeys(IDS, 6),
    "r_step": {i: int(i[1]) for i in IDS},
}
EXPECTED = {
    "r_sixes": {
        "agreeableness": 5.0,
        "conscientiousness": 4.0,
        "extraversion": 4.0,
        "neuroticism": 6.0,
        "openness": 4.0,
    },
    "r_step": {
        "agreeableness": 4.0,
        "conscientiousness": 2.2,
        "extraversion": 4.6,
        "neuroticism": 3.0,
        "openness": 3.0,
    },
}


def test_ipip_bfi25_hand_scored(check_key):
    check_key("ipip-bfi25", RESPONSES, EXPECTED)


def test_ipip_bfi25_items_and_keys():
    inst = get_instrument("ipip-bfi25")
    assert [it.id for it in inst.items] == IDS
    assert {it.id for it in inst.items if it.reverse} == REVERSE
    for scale, letter in SCALES.items():
        assert [it.id for it in inst.scale_items(scale)] == [f"{letter}{i}" for i in range(1, 6)]
    rs = inst.response_scale_for(inst.items[0])
    assert rs.values() == [1, 2, 3, 4, 5, 6]
    assert rs.options[0].label == "Very Inaccurate" and rs.options[-1].label == "Very Accurate"
    assert inst.items[0].text == "Am indifferent to the feelings of others"
