"""PVQ-40: key, higher-order values, MRAT centring, schema.

Source of the key: Schwartz's PVQ-40 scoring key as tabulated in psymetrics seed notes 000 §2.3
(self-direction 1, 11, 22, 34; power 2, 17, 39; universalism 3, 8, 19, 23, 29, 40; achievement 4,
13, 24, 32; security 5, 14, 21, 31, 35; stimulation 6, 15, 30; conformity 7, 16, 28, 36; tradition
9, 20, 25, 38; hedonism 10, 26, 37; benevolence 12, 18, 27, 33); no reverse keying; centring =
value mean minus MRAT (mean rating of all 40 items), Schwartz (2012).
"""

from __future__ import annotations

from psymetrics_core import get_instrument

KEY = {
    "self_direction": {1, 11, 22, 34},
    "power": {2, 17, 39},
    "universalism": {3, 8, 19, 23, 29, 40},
    "achievement": {4, 13, 24, 32},
    "security": {5, 14, 21, 31, 35},
    "stimulation": {6, 15, 30},
    "conformity": {7, 16, 28, 36},
    "tradition": {9, 20, 25, 38},
    "hedonism": {10, 26, 37},
    "benevolence": {12, 18, 27, 33},
}

# r_cycle answers item i with ((i - 1) mod 6) + 1 (1:1 2:2 3:3 4:4 5:5 6:6 7:1 ... 37:1 38:2
#   39:3 40:4). MRAT = (6 cycles * 21 + 1+2+3+4) / 40 = 136/40 = 3.4
#   self_direction 1+5+4+4 = 14 -> 3.5 (centred 0.1); power 2+5+3 = 10 -> 10/3;
#   universalism 3+2+1+5+5+4 = 20 -> 20/6; achievement 4+1+6+2 = 13 -> 3.25;
#   security 5+2+3+1+5 = 16 -> 3.2; stimulation 6+3+6 = 15 -> 5.0; conformity 1+4+4+6 = 15 -> 3.75;
#   tradition 3+2+1+2 = 8 -> 2.0; hedonism 4+2+1 = 7 -> 7/3; benevolence 6+6+3+3 = 18 -> 4.5
#   (sum of the ten = 136, as it must be)
#   openness_to_change (SD+ST+HE) = (14+15+7)/10 = 3.6 (centred 0.2);
#   self_enhancement (AC+PO) = 23/7; conservation (SE+CO+TR) = 39/13 = 3.0;
#   self_transcendence (BE+UN) = 38/10 = 3.8
# r_bene answers 4 everywhere except the benevolence items (6): MRAT = (36*4 + 4*6)/40 = 4.2;
#   benevolence 6 (centred 1.8), power 4 (centred -0.2); self_transcendence = (4*6 + 6*4)/10 = 4.8
#   (centred 0.6)
RESPONSES = {
    "r_cycle": {str(i): (i - 1) % 6 + 1 for i in range(1, 41)},
    "r_bene": {str(i): 6 if i in KEY["benevolence"] else 4 for i in range(1, 41)},
}
EXPECTED = {
    "r_cycle": {
        "self_direction": 3.5,
        "power": 10 / 3,
        "universalism": 20 / 6,
        "achievement": 3.25,
        "security": 3.2,
        "stimulation": 5.0,
        "conformity": 3.75,
        "tradition": 2.0,
        "hedonism": 7 / 3,
        "benevolence": 4.5,
        "openness_to_change": 3.6,
        "self_enhancement": 23 / 7,
        "conservation": 3.0,
        "self_transcendence": 3.8,
        "self_direction_centred": 3.5 - 3.4,
        "tradition_centred": 2.0 - 3.4,
        "openness_to_change_centred": 3.6 - 3.4,
    },
    "r_bene": {
        "benevolence": 6.0,
        "benevolence_centred": 1.8,
        "power": 4.0,
        "power_centred": -0.2,
        "self_transcendence": 4.8,
        "self_transcendence_centred": 0.6,
    },
}


def test_pvq40_hand_scored(check_key):
    check_key("pvq40", RESPONSES, EXPECTED)


def test_pvq40_schema_matches_the_notes():
    inst = get_instrument("pvq40")
    assert not inst.texts_shipped
    assert [it.id for it in inst.items] == [str(i) for i in range(1, 41)]
    for name, ids in KEY.items():
        assert {int(it.id) for it in inst.scale_items(name)} == ids
        assert {int(it.id) for it in inst.scale_items(f"{name}_centred")} == ids
        assert inst.scales[f"{name}_centred"].centre == "mrat"
    assert not any(it.reverse for it in inst.items)
    assert inst.response_scales["default"].values() == [1, 2, 3, 4, 5, 6]
    assert {int(i.id) for i in inst.scale_items("conservation")} == (
        KEY["security"] | KEY["conformity"] | KEY["tradition"]
    )
