"""SR2K: key, item-3 rescaling, analysis orientation and schema.

Source: Henry & Sears (2002) as administered by Jung et al. (2026) Table 12 and footnote 4, with
the item-3 map of the authors' code (psymetrics seed notes 002 §2.2): reverse-keyed 5, 6, 7
(x' = 5 - x on 1-4); item 3 (1-3) rescaled 1 -> 1, 2 -> 2.5, 3 -> 4; racism_original_coding =
mean of the 8 values; racism = mean of the inverted values 5 - x' (higher = more racism).
"""

from __future__ import annotations

from psymetrics_core import get_instrument

# r_ones answers 1 everywhere (item 3: "trying to push too fast" = 1 -> 1):
#   values 1, 1, 1, 1, (5-1)=4, 4, 4, 1 -> sum 17 -> original coding 17/8 = 2.125
#   inverted 4, 4, 4, 4, 1, 1, 1, 4 -> sum 23 -> racism 23/8 = 2.875
# r_mixed answers 1:4 2:3 3:2 4:2 5:1 6:2 7:3 8:4:
#   values 4, 3, 2.5 (item 3: 2 -> 2.5), 2, (5-1)=4, (5-2)=3, (5-3)=2, 4 -> sum 24.5 -> 3.0625
#   racism = (8 * 5 - 24.5) / 8 = 15.5 / 8 = 1.9375
# r_fours answers 4 everywhere, item 3 = 3 ("about the right speed" -> 4):
#   values 4, 4, 4, 4, 1, 1, 1, 4 -> 23/8 = 2.875; racism = 17/8 = 2.125
# racism_alt_item3 recodes item 3 as 1 -> 1, 2 -> 4, 3 -> 2.5 before inverting:
#   r_ones: item 3 = 1 -> 1, as in racism -> 2.875
#   r_mixed: item 3 = 2 -> 4 (not 2.5): sum 24.5 - 2.5 + 4 = 26 -> (40 - 26) / 8 = 1.75
#   r_fours: item 3 = 3 -> 2.5 (not 4): sum 23 - 4 + 2.5 = 21.5 -> (40 - 21.5) / 8 = 2.3125
RESPONSES = {
    "r_ones": {str(i): 1 for i in range(1, 9)},
    "r_mixed": {"1": 4, "2": 3, "3": 2, "4": 2, "5": 1, "6": 2, "7": 3, "8": 4},
    "r_fours": {**{str(i): 4 for i in range(1, 9)}, "3": 3},
}
EXPECTED = {
    "r_ones": {"racism_original_coding": 2.125, "racism": 2.875, "racism_alt_item3": 2.875},
    "r_mixed": {"racism_original_coding": 3.0625, "racism": 1.9375, "racism_alt_item3": 1.75},
    "r_fours": {"racism_original_coding": 2.875, "racism": 2.125, "racism_alt_item3": 2.3125},
}


def test_sr2k_hand_scored_original(check_key):
    check_key("sr2k", RESPONSES, EXPECTED)


def test_sr2k_hand_scored_alternate_form(check_key):
    check_key("sr2k", RESPONSES, EXPECTED, form="alternate")


def test_sr2k_item3_accepts_only_its_three_codes(tmp_path):
    import pytest

    from psymetrics_core import score_responses
    from psymetrics_core.api import ResponsesError

    path = tmp_path / "bad.csv"
    path.write_text("respondent,item,response\nr,3,4\n", encoding="utf-8")
    with pytest.raises(ResponsesError, match=r"line 2: response '4' to item 3"):
        score_responses("sr2k", path)


def test_sr2k_schema_matches_the_notes():
    inst = get_instrument("sr2k")
    assert set(inst.forms) == {"original", "alternate"}
    for form, items in inst.forms.items():
        assert len(items) == 8
        assert {int(it.id) for it in items if it.reverse} == {5, 6, 7}
        assert {int(it.id) for it in inst.scale_items("racism", form)} == set(range(1, 9))
        sets = {int(it.id): it.response_scale for it in items}
        assert sets == {1: "agree4", 2: "agree4", 3: "speed3", 4: "amount4", 5: "discr4"} | {
            6: "agree4",
            7: "agree4",
            8: "agree4",
        }
        assert [it.rescale for it in items if it.rescale] == [((1, 1.0), (2, 2.5), (3, 4.0))]
    assert inst.scales["racism"].invert and not inst.scales["racism_original_coding"].invert
    assert "more symbolic racism" in inst.scales["racism"].higher_is
    assert inst.response_scales["speed3"].values() == [1, 2, 3]


def test_sr2k_show_states_the_orientation():
    import json
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "psymetrics_core", "show", "sr2k", "--json"]
    info = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    assert info["scales"]["racism"]["higher_is"].startswith("more symbolic racism")
    assert info["scales"]["racism_original_coding"]["higher_is"].startswith("less")
