"""PVQ-21 (ESS Human Values Scale): key, forms, question texts.

Source of the key, checked by hand: Schwartz's "Computing scores for the 10 human values" (the
ESS data website's scoring instructions for the Human Values Scale): conformity 7, 16; tradition
9, 20; benevolence 12, 18; universalism 3, 8, 19; self-direction 1, 11; stimulation 6, 15;
hedonism 10, 21; achievement 4, 13; power 2, 17; security 5, 14; value = mean of its items, no
reverse keying. The same assignment is in Song et al.'s (2025) surveys/PVQ21.json meta_data.
"""

from __future__ import annotations

import csv

import pytest

from psymetrics_core import get_instrument

KEY = {
    "conformity": {7, 16},
    "tradition": {9, 20},
    "benevolence": {12, 18},
    "universalism": {3, 8, 19},
    "self_direction": {1, 11},
    "stimulation": {6, 15},
    "hedonism": {10, 21},
    "achievement": {4, 13},
    "power": {2, 17},
    "security": {5, 14},
}
FORMS = ("original", "female", "third_person")

# r_cycle answers item i with ((i - 1) mod 6) + 1: 1:1 2:2 3:3 4:4 5:5 6:6 7:1 8:2 9:3 10:4 11:5
#   12:6 13:1 14:2 15:3 16:4 17:5 18:6 19:1 20:2 21:3. Sum = 3 * 21 + 1+2+3 = 69, MRAT = 69/21
#   self_direction (1, 11) 1+5 = 6 -> 3.0; power (2, 17) 2+5 -> 3.5; universalism (3, 8, 19)
#   3+2+1 = 6 -> 2.0; achievement (4, 13) 4+1 -> 2.5; security (5, 14) 5+2 -> 3.5;
#   stimulation (6, 15) 6+3 -> 4.5; conformity (7, 16) 1+4 -> 2.5; tradition (9, 20) 3+2 -> 2.5;
#   hedonism (10, 21) 4+3 -> 3.5; benevolence (12, 18) 6+6 -> 6.0 (the ten sums add to 69)
#   openness_to_change (SD+ST+HE items) = (6+9+7)/6 = 22/6; self_enhancement (AC+PO) = (5+7)/4
#   = 3.0; conservation (SE+CO+TR) = (7+5+5)/6 = 17/6; self_transcendence (BE+UN) = (12+6)/5 = 3.6
#   benevolence_centred = 6 - 69/21; universalism_centred = 2 - 69/21
RESPONSES = {"r_cycle": {str(i): (i - 1) % 6 + 1 for i in range(1, 22)}}
MRAT = 69 / 21
EXPECTED = {
    "r_cycle": {
        "self_direction": 3.0,
        "power": 3.5,
        "universalism": 2.0,
        "achievement": 2.5,
        "security": 3.5,
        "stimulation": 4.5,
        "conformity": 2.5,
        "tradition": 2.5,
        "hedonism": 3.5,
        "benevolence": 6.0,
        "openness_to_change": 22 / 6,
        "self_enhancement": 3.0,
        "conservation": 17 / 6,
        "self_transcendence": 3.6,
        "benevolence_centred": 6.0 - MRAT,
        "universalism_centred": 2.0 - MRAT,
        "openness_to_change_centred": 22 / 6 - MRAT,
    }
}


@pytest.mark.parametrize("form", FORMS)
def test_pvq21_hand_scored_in_every_form(check_key, form):
    check_key("pvq21", RESPONSES, EXPECTED, form=form)


def test_pvq21_schema_matches_the_ess_key():
    inst = get_instrument("pvq21")
    assert inst.texts_shipped
    assert list(inst.forms) == list(FORMS)
    for form in FORMS:
        items = inst.forms[form]
        assert [it.id for it in items] == [str(i) for i in range(1, 22)]
        for name, ids in KEY.items():
            assert {int(it.id) for it in items if name in it.scales} == ids, (form, name)
        assert not any(it.reverse for it in items)
    for name, ids in KEY.items():
        assert {int(it.id) for it in inst.scale_items(f"{name}_centred")} == ids
    assert {int(i.id) for i in inst.scale_items("openness_to_change")} == (
        KEY["self_direction"] | KEY["stimulation"] | KEY["hedonism"]
    )
    assert inst.response_scales["default"].values() == [1, 2, 3, 4, 5, 6]


def test_pvq21_forms_differ_only_in_pronouns():
    """The three forms are one text in three pronoun sets (ESS male, ESS female, Song et al.'s
    gender-neutral "they"): items 1, 2 and 20 spelled out, and no form mixes sets."""
    inst = get_instrument("pvq21")
    text = {form: {it.id: it.text for it in inst.forms[form]} for form in FORMS}
    assert text["original"]["2"] == (
        "It is important to him to be rich. He wants to have a lot of money and expensive things."
    )
    assert text["female"]["2"] == (
        "It is important to her to be rich. She wants to have a lot of money and expensive things."
    )
    assert text["third_person"]["20"] == (
        "Tradition is important to them. They try to follow the customs handed down by their "
        "religion or their family."
    )
    for form, banned in (
        ("original", {"she", "her", "they", "them", "their"}),
        ("female", {"he", "him", "his", "they", "them", "their"}),
        ("third_person", {"he", "him", "his", "she", "her"}),
    ):
        for iid, t in text[form].items():
            words = {w.strip('.,"').lower() for w in t.split()}
            # "they"/"them" also refer to other people in the ESS texts (items 7, 8, 12)
            allowed = {"7": {"they"}, "8": {"them"}, "12": {"their"}}.get(iid, set())
            assert not (words & banned) - allowed, (form, iid, t)


def test_pvq21_question_column_in_every_form():
    """Every row of every form carries its interview question, second person, ending '?', the
    same question in every form (the loader accepts the extra column)."""
    inst = get_instrument("pvq21")
    questions = {}
    for form, rel in inst.form_files.items():
        with (inst.spec_path.parent / rel).open(encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        assert [r["id"] for r in rows] == [it.id for it in inst.forms[form]]
        questions[form] = [r["question"] for r in rows]
        for q in questions[form]:
            assert q.strip() == q and q.endswith("?") and " you" in f" {q.lower()}", (form, q)
    assert questions["original"] == questions["female"] == questions["third_person"]
