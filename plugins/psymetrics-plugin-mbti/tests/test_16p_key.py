"""16p: the UNOFFICIAL content key, 0-100 scores, type code and the unofficial flag.

Source of the key: psymetrics seed notes 001 §2.6 (content-based candidate key, NOT the
proprietary 16Personalities key): per dimension, first-pole items (agree -> E, N, T, J, A) and
second-pole items; v = +3 (agree, code 1) ... -3 (disagree, code 7) and
score = 50 + 50 * sum(key * v) / (3 * n). Type rule (seed notes 001 §2.7): first pole at >= 50.
"""

from __future__ import annotations

from psymetrics_core import get_instrument
from psymetrics_core.api import Answer, Session

KEY = {  # dimension: (first-pole items, second-pole items)
    "extraverted": ({1, 11, 16, 31, 36, 43, 53}, {6, 21, 26, 41, 51}),
    "intuitive": ({2, 17, 19, 30, 37, 42, 57}, {12, 22, 32, 46, 52}),
    "thinking": ({13, 23, 25, 28, 38}, {3, 8, 18, 33, 48, 54, 58}),
    "judging": ({4, 7, 9, 24, 39, 44, 56}, {14, 29, 34, 49, 59}),
    "assertive": ({5, 15, 35, 40, 60}, {10, 20, 27, 45, 47, 50, 55}),
}

# r_agree answers 1 (agree, v = +3) to all 60 items:
#   E: 7 first-pole, 5 second-pole -> sum(key*v) = 3*(7-5) = 6 -> 50 + 50*6/36 = 58.333...
#   N: 7 vs 5 -> 58.333; T: 5 vs 7 -> 50 - 50*6/36 = 41.667; J: 7 vs 5 -> 58.333;
#   A: 5 vs 7 -> 41.667 -> type E N F J -T = "ENFJ-T" (Protagonist)
# r_extra answers the E first-pole items 1 (agree), the E second-pole items 7 (disagree) and all
#   others 4 (neutral, v = 0): E = 50 + 50*(12*3)/36 = 100; N = T = J = A = 50 -> "ENTJ-A"
#   (ties at 50 go to the first pole) (Commander)
RESPONSES = {
    "r_agree": {str(i): 1 for i in range(1, 61)},
    "r_extra": {
        str(i): 1 if i in KEY["extraverted"][0] else 7 if i in KEY["extraverted"][1] else 4
        for i in range(1, 61)
    },
}
EXPECTED = {
    "r_agree": {
        "extraverted": 50 + 50 * 6 / 36,
        "intuitive": 50 + 50 * 6 / 36,
        "thinking": 50 - 50 * 6 / 36,
        "judging": 50 + 50 * 6 / 36,
        "assertive": 50 - 50 * 6 / 36,
    },
    "r_extra": {
        "extraverted": 100,
        "intuitive": 50,
        "thinking": 50,
        "judging": 50,
        "assertive": 50,
    },
}
TYPES = {"r_agree": ("ENFJ-T", "Protagonist"), "r_extra": ("ENTJ-A", "Commander")}


def test_16p_hand_scored(check_key):
    check_key("16p", RESPONSES, EXPECTED)


def test_16p_results_carry_type_and_unofficial_flag():
    session = Session()
    inst = session.get_instrument("16p")
    hook = session.hook
    for who, answers in RESPONSES.items():
        given = {k: Answer(v, "ok") for k, v in answers.items()}
        scores = hook.score(instrument=inst, responses=answers, form="original", answers=given)
        pairs = [(it, given[it.id]) for it in inst.items]
        entry = hook.aggregate(instrument=inst, scores=scores, answers=pairs, norm_group=None)
        assert (entry["type"], entry["role"]) == TYPES[who]
        assert entry["key"] == "unofficial"
        assert entry["scales"]["extraverted"]["score"] == EXPECTED[who]["extraverted"]


def test_16p_hooks_leave_other_tasks_alone():
    from psymetrics_plugin_mbti import aggregate, score

    other = get_instrument("asi")
    assert score(instrument=other, responses={}, form="original") is None
    assert aggregate(instrument=other, scores={}, answers=[]) is None


def test_16p_schema_matches_the_notes():
    inst = get_instrument("16p")
    assert inst.extra.get("key_status") == "unofficial"
    assert "UNOFFICIAL" in inst.name and "UNOFFICIAL" in inst.scoring_rule
    assert len(inst.items) == 60
    assert inst.items[0].text == "You regularly make new friends."
    assert inst.items[25].text == "You tend to avoid drawing attention to yourself."
    assert inst.response_scales["default"].values() == list(range(1, 8))
    for name, (first, second) in KEY.items():
        members = inst.scale_items(name)
        assert {int(it.id) for it in members} == first | second
        # code 1 = agree, so first-pole items are the recoded (8 - x) ones
        assert {int(it.id) for it in members if it.reverse} == first


def test_16p_show_flags_the_key_as_unofficial():
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "psymetrics_core", "show", "16p"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert out.count("UNOFFICIAL") >= 2  # the name and the scoring rule
