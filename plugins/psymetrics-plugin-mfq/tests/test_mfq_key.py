"""MFQ-30: key, both forms, and schema.

Source of the key: Graham et al. (2011) / moralfoundations.org MFQ30 key in the official 1-32
numbering (psymetrics seed notes 000 §2.2): care 1, 7, 12, 17, 23, 28; fairness 2, 8, 13, 18, 24,
29; loyalty 3, 9, 14, 19, 25, 30; authority 4, 10, 15, 20, 26, 31; purity 5, 11, 16, 21, 27, 32;
catch items 6 and 22 unscored; no reverse keying; foundation = mean (0-5).
"""

from __future__ import annotations

from psymetrics_core import get_instrument

KEY = {
    "care": {1, 7, 12, 17, 23, 28},
    "fairness": {2, 8, 13, 18, 24, 29},
    "loyalty": {3, 9, 14, 19, 25, 30},
    "authority": {4, 10, 15, 20, 26, 31},
    "purity": {5, 11, 16, 21, 27, 32},
}
INDEX = {name: i for i, name in enumerate(KEY)}  # care 0 ... purity 4

# r_found answers each item with its foundation's index (care 0 ... purity 4) and the catch
#   items 6 and 22 with 5, which must not count: care 0, fairness 1, loyalty 2, authority 3,
#   purity 4.
# r_cycle answers item i with i mod 6 (1:1 2:2 3:3 4:4 5:5 6:0 7:1 8:2 9:3 10:4 11:5 12:0 13:1
#   14:2 15:3 16:4 17:5 18:0 19:1 20:2 21:3 22:4 23:5 24:0 25:1 26:2 27:3 28:4 29:5 30:0 31:1 32:2)
#   care 1+1+0+5+5+4 = 16 -> 16/6; fairness 2+2+1+0+0+5 = 10 -> 10/6;
#   loyalty 3+3+2+1+1+0 = 10 -> 10/6; authority 4+4+3+2+2+1 = 16 -> 16/6;
#   purity 5+5+4+3+3+2 = 22 -> 22/6
_found = {str(i): INDEX[f] for f, ids in KEY.items() for i in ids}
RESPONSES = {
    "r_found": {**_found, "6": 5, "22": 5},
    "r_cycle": {str(i): i % 6 for i in range(1, 33)},
}
EXPECTED = {
    "r_found": {"care": 0, "fairness": 1, "loyalty": 2, "authority": 3, "purity": 4},
    "r_cycle": {
        "care": 16 / 6,
        "fairness": 10 / 6,
        "loyalty": 10 / 6,
        "authority": 16 / 6,
        "purity": 22 / 6,
    },
}


def test_mfq_hand_scored_original(check_key):
    check_key("mfq", RESPONSES, EXPECTED)


def test_mfq_hand_scored_alternate_form(check_key):
    check_key("mfq", RESPONSES, EXPECTED, form="alternate")


def test_mfq_schema_matches_the_notes():
    inst = get_instrument("mfq")
    assert set(inst.forms) == {"original", "alternate"}
    for form, items in inst.forms.items():
        assert [it.id for it in items] == [str(i) for i in range(1, 33)]
        for name, ids in KEY.items():
            assert {int(it.id) for it in inst.scale_items(name, form)} == ids
        assert not any(it.reverse for it in items)
        assert {int(it.id): it.flag for it in items if it.flag} == {
            6: "attention_check",
            22: "attention_check",
        }
        assert {int(it.id) for it in items if it.response_scale == "relevance"} == set(range(1, 17))


def test_mfq_alternate_texts_mapped_by_content():
    """Spot checks of the seed-002 (1-30) -> official (1-32) mapping, Table 16 texts."""
    alt = {int(it.id): it.text for it in get_instrument("mfq").forms["alternate"]}
    orig = {int(it.id): it.text for it in get_instrument("mfq").forms["original"]}
    assert alt[2] == "Whether or not individuals received unequal treatment"  # paper 4
    assert alt[12] == "Whether or not someone was brutal"  # paper 3 "was cruel"
    assert alt[28] == "Taking a human life is always morally wrong."  # paper 18
    assert alt[32] == "Maintaining sexual purity is an essential and precious virtue."  # paper 30
    assert alt[6] == orig[6] and alt[22] == orig[22]  # catch items keep their original text
    assert all(alt[i] != orig[i] for i in alt if i not in (6, 22))
