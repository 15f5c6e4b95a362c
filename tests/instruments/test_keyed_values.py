"""``spec_scoring.keyed_values``: an answer keyed per scale exactly as the scorer keys it."""

from __future__ import annotations

from pathlib import Path

import pytest

from psymetrics_core.instruments.scoring import keyed_values, mrat_term
from psymetrics_core.instruments.spec import load_instrument

SPEC = """\
schema_version: 1
id: toy
name: Toy
version: "1"
citation: none
license: {status: test}
item_source: test
forms: {original: items.csv}
response_scales:
  default: {min: 1, max: 4, labels: [a, b, c, d]}
  three: {min: 1, max: 3, labels: [x, y, z]}
scales:
  a: {method: mean}
  b: {method: mean}
  both: {items: [a, b], invert: true}
  a_c: {items: [a], centre: mrat}
  alt: {items: all, invert: true, rescale: {"3": "1=1;2=4;3=2.5"}}
prompt: {instruction: Answer.}
"""
ITEMS = """\
id,text,scale,reverse,response_scale,rescale,flag
1,one,a,0,default,,
2,two,a,1,default,,
3,three,b,0,three,1=1;2=2.5;3=4,
4,check,,0,default,,attention_check
"""


@pytest.fixture
def toy(tmp_path: Path):
    (tmp_path / "instrument.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "items.csv").write_text(ITEMS, encoding="utf-8")
    return load_instrument(tmp_path)


def test_keyed_values_by_hand(toy):
    it1, it2, it3, it4 = toy.items
    # item 1 answered 1: a = 1; both (inverted on 1-4: 5 - x) = 4; a_c uncentred = 1;
    # alt (inverted) = 4
    assert keyed_values(toy, "original", it1, 1) == {"a": 1.0, "both": 4.0, "a_c": 1.0, "alt": 4.0}
    # item 2 is reverse keyed: 1 -> 4 on a; inverted scales give 5 - 4 = 1
    assert keyed_values(toy, "original", it2, 1) == {"a": 4.0, "both": 1.0, "a_c": 4.0, "alt": 1.0}
    # item 3 answered 2: its own map gives 2.5 (b; both inverted over 1..4 -> 2.5); alt's
    # per-scale map gives 4, inverted over 1..4 -> 1
    assert keyed_values(toy, "original", it3, 2) == {"b": 2.5, "both": 2.5, "alt": 1.0}
    assert keyed_values(toy, "original", it3, 3) == {"b": 4.0, "both": 1.0, "alt": 2.5}
    # unanswered and unscored items count towards nothing
    assert keyed_values(toy, "original", it1, None) == {}
    assert keyed_values(toy, "original", it4, 2) == {}
    # the MRAT term: reverse keying and the item's own map, no inversion
    assert [mrat_term(toy, it, v) for it, v in ((it1, 1), (it2, 1), (it3, 2), (it4, 2))] == [
        1.0,
        4.0,
        2.5,
        None,
    ]


def test_scores_are_means_of_keyed_values(toy):
    from psymetrics_core.pluginsys.defaults.score import score

    answers = {"1": 2, "2": 3, "3": 3, "4": 1}
    got = {k: v.score for k, v in score(instrument=toy, responses=answers, form="original").items()}
    keyed = [keyed_values(toy, "original", it, answers[it.id]) for it in toy.items]
    mrat = (2 + 2 + 4) / 3  # item 2 reversed: 5 - 3 = 2; item 3 mapped 3 -> 4
    for scale in toy.scales:
        vals = [k[scale] for k in keyed if scale in k]
        centre = mrat if scale == "a_c" else 0.0
        assert got[scale] == pytest.approx(sum(vals) / len(vals) - centre), scale


def test_sr2k_alternative_item_3_coding(fresh_plugins):
    inst = fresh_plugins.get_instrument("sr2k")
    it3 = next(it for it in inst.items if it.id == "3")
    # answer 3 ("too slowly"): published map 3 -> 4, inverted on 1..4 -> 1 (racism);
    # racism_alt_item3 maps 3 -> 2.5, inverted -> 2.5
    k = keyed_values(inst, "original", it3, 3)
    assert k["racism"] == 1.0 and k["racism_original_coding"] == 4.0
    assert k["racism_alt_item3"] == 2.5
