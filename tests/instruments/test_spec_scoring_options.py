"""The optional per-item ``rescale`` column and the scale options ``items: [scales]``,
``centre: mrat``, ``invert`` and ``higher_is`` (used by the sr2k and pvq40 plugins)."""

from __future__ import annotations

from pathlib import Path

import pytest

from psymetrics_core.base.errors import SpecError
from psymetrics_core.instruments.spec import load_instrument
from psymetrics_core.pluginsys.defaults.score import score

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
%s
prompt: {instruction: Answer.}
"""
ITEMS = """\
id,text,scale,reverse,response_scale,rescale
1,one,a,0,default,
2,two,a,1,default,
3,three,b,0,three,%s
"""


def _spec(tmp_path: Path, scales: str = "", rescale: str = "1=1;2=2.5;3=4") -> Path:
    (tmp_path / "instrument.yaml").write_text(SPEC % scales, encoding="utf-8")
    (tmp_path / "items.csv").write_text(ITEMS % rescale, encoding="utf-8")
    return tmp_path


def test_rescale_invert_union_and_mrat(tmp_path):
    extra = (
        "  both: {items: [a, b], invert: true, higher_is: more}\n"
        "  a_c: {items: [a], centre: mrat}\n"
        "  tot: {items: all, method: sum}"
    )
    inst = load_instrument(_spec(tmp_path, extra))
    assert inst.items[2].rescale == ((1, 1.0), (2, 2.5), (3, 4.0))
    assert inst.scales["both"].higher_is == "more"
    # answers 1:1, 2:1 (reversed -> 4), 3:2 (rescaled -> 2.5); by hand:
    #   a = (1 + 4) / 2 = 2.5; b = 2.5; tot = 1 + 4 + 2.5 = 7.5
    #   both (inverted 5 - x on 1-4): (4 + 1 + 2.5) / 3 = 2.5
    #   MRAT = 7.5 / 3 = 2.5 -> a_c = 2.5 - 2.5 = 0
    got = score(instrument=inst, responses={"1": 1, "2": 1, "3": 2}, form="original")
    assert {k: v.score for k, v in got.items()} == pytest.approx(
        {"a": 2.5, "b": 2.5, "both": 2.5, "a_c": 0.0, "tot": 7.5}
    )
    # answers 1:4, 2:2 (-> 3), 3:3 (-> 4): a = 3.5, both = (1 + 2 + 1) / 3, MRAT = 11/3
    got = score(instrument=inst, responses={"1": 4, "2": 2, "3": 3}, form="original")
    assert got["both"].score == pytest.approx(4 / 3)
    assert got["a_c"].score == pytest.approx(3.5 - 11 / 3)


@pytest.mark.parametrize(
    ("rescale", "message"),
    [
        ("1=1;2=2", r"row 4, field 'rescale': give one target for each value \[1, 2, 3\]"),
        ("1:1", r"row 4, field 'rescale': expected value=target pairs"),
        ("1=a;2=2;3=3", r"expected value=target pairs"),
    ],
)
def test_bad_rescale_names_row_and_field(tmp_path, rescale, message):
    with pytest.raises(SpecError, match=message):
        load_instrument(_spec(tmp_path, rescale=rescale))


@pytest.mark.parametrize(
    ("scales", "message"),
    [
        ("  c: {items: [a, nope]}", r"field 'scales.c.items': unknown scale 'nope'"),
        ("  c: {items: 3}", r"field 'scales.c.items': expected 'all' or a list of scale names"),
        ("  c: {items: [a], centre: mean}", r"field 'scales.c.centre': expected 'mrat'"),
        ("  c: {items: [a], invert: yes please}", r"field 'scales.c.invert': expected true or"),
        ("  c: {items: [b], rescale: {9: '1=1'}}", r"field 'scales.c.rescale.9': unknown item id"),
        (
            "  c: {items: [b], rescale: {3: '1=1'}}",
            r"'scales.c.rescale.3': give one target for each",
        ),
        ("  c: {items: [b], rescale: [3]}", r"field 'scales.c.rescale': expected a mapping"),
    ],
)
def test_bad_scale_options_name_the_field(tmp_path, scales, message):
    with pytest.raises(SpecError, match=message):
        load_instrument(_spec(tmp_path, scales))


def test_scale_rescale_overrides_the_item_map_for_that_scale_only(tmp_path):
    inst = load_instrument(_spec(tmp_path, "  b2: {items: [b], rescale: {3: '1=1;2=4;3=2.5'}}"))
    # item 3 answered 2: the CSV map gives 2.5 (scale b), the override gives 4 (scale b2)
    got = score(instrument=inst, responses={"3": 2}, form="original")
    assert (got["b"].score, got["b2"].score) == (2.5, 4.0)
