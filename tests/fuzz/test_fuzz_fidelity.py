"""Fuzz cases of ``psym fidelity MODEL HUMAN`` (issue 34): malformed answers files (long and
wide), distribution tables, mismatched option sets and group columns; each must end in one line
naming the file and the line or field."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import expect_clean_error, run_cli

from psymetrics_core.analysis.fidelity import FidelityOptions, fidelity
from psymetrics_core.pluginsys.session import Session

LONG = "respondent,item,response\n" + "".join(
    f"r{i},{it},{1 + (i + j) % 5}\n" for i in range(4) for j, it in enumerate(("a", "b"))
)
TABLE = "item,option,share\na,1,0.5\na,2,0.5\nb,1,0.25\nb,2,0.75\n"

# name, model text, human text, options, expected fragment of the message
CASES = [
    ("long-empty-respondent", LONG, LONG + ",a,3\n", {}, "line 10: field 'respondent': empty"),
    (
        "long-duplicate",
        LONG,
        LONG + "r0,a,3\n",
        {},
        "line 10: respondent 'r0' answers item 'a' twice",
    ),
    (
        "long-negative-weight",
        LONG,
        "respondent,item,response,weight\nr1,a,2,-1\n",
        {},
        "line 2: field 'weight': expected a finite number >= 0, got '-1'",
    ),
    (
        "long-nan-weight",
        LONG,
        "respondent,item,response,weight\nr1,a,2,nan\n",
        {},
        "line 2: field 'weight': expected a finite number >= 0, got 'nan'",
    ),
    (
        "long-text-weight",
        LONG,
        "respondent,item,response,weight\nr1,a,2,heavy\n",
        {},
        "field 'weight'",
    ),
    (
        "long-bad-position",
        LONG,
        "respondent,item,response,position\nr1,a,2,mid\n",
        {},
        "line 2: field 'position': expected a finite number",
    ),
    (
        "long-label-varies",
        LONG,
        "respondent,item,response,g\nr1,a,2,x\nr1,b,3,y\n",
        {},
        "line 3: field 'g': respondent 'r1' has more than one 'g' value",
    ),
    (
        "long-text-answer",
        LONG,
        "respondent,item,response\nr1,a,often\n",
        {},
        "line 2: field 'response': 'often' is not a number",
    ),
    (
        "unknown-option-of-task",
        LONG.replace(",a,", ",A1,").replace(",b,", ",A2,"),
        "respondent,item,response\nr1,A1,7\n",
        {"task": "ipip-bfi25"},
        "line 2: field 'response': item 'A1': '7' is not one of its options",
    ),
    (
        "unknown-item-of-task",
        "respondent,item,response\nr1,A1,2\n",
        "respondent,item,response\nr1,Z9,2\n",
        {"task": "ipip-bfi25"},
        "line 2: field 'item': 'Z9' is not an item of task ipip-bfi25",
    ),
    (
        "wide-duplicate",
        LONG,
        "respondent,a,b\nr1,1,2\nr1,2,3\n",
        {},
        "line 3: respondent 'r1' appears twice",
    ),
    ("bad-header", LONG, "who,what\nx,y\n", {}, "expected respondent,item,response"),
    ("no-rows", LONG, "respondent,item,response\n", {}, "no rows"),
    (
        "table-share-above-1",
        TABLE,
        "item,option,share\na,1,1.5\n",
        {},
        "line 2: field 'share': expected a share in 0..1",
    ),
    (
        "table-sum",
        TABLE,
        "item,option,share\na,1,0.5\na,2,0.3\n",
        {},
        "line 2: field 'share': the shares of item 'a' sum to 0.8",
    ),
    (
        "table-share-and-count",
        TABLE,
        "item,option,share,count\na,1,1,3\n",
        {},
        "both 'share' and 'count'",
    ),
    (
        "table-negative-count",
        TABLE,
        "item,option,count\na,1,-3\n",
        {},
        "line 2: field 'count': expected a finite number >= 0",
    ),
    (
        "table-duplicate-option",
        TABLE,
        "item,option,count\na,1,3\na,1.0,2\n",
        {},
        "line 3: item 'a' lists option '1' twice",
    ),
    (
        "table-text-option",
        TABLE,
        "item,option,count\na,yes,3\n",
        {},
        "line 2: field 'option': 'yes' is not a number",
    ),
    (
        "mismatched-options",
        TABLE,
        "item,option,share\na,1,0.5\na,3,0.5\n",
        {},
        "item 'a': options 1, 3 differ from the other side's",
    ),
    (
        "group-missing-on-human",
        LONG,
        LONG,
        {"groups": ("gender",)},
        "--group gender: no such column",
    ),
    (
        "group-missing-on-model",
        LONG,
        "respondent,item,response,gender\nr1,a,2,1\n",
        {"groups": ("gender",)},
        "--group gender: no such column",
    ),
    ("no-common-item", LONG, "respondent,item,response\nr1,zz,2\n", {}, "no item in common"),
    ("nul-byte", LONG, "respondent,item,response\nr1,a,\x002\n", {}, "NUL byte"),
]


@pytest.fixture(scope="module")
def session() -> Session:
    """One session for the module, its plugins loaded before any case is timed."""
    s = Session()
    s.get_instrument("ipip-bfi25")
    return s


@pytest.mark.parametrize(
    ("name", "model", "human", "kw", "expect"), CASES, ids=[c[0] for c in CASES]
)
def test_fuzz_fidelity(
    tmp_path: Path, session: Session, name: str, model: str, human: str, kw: dict, expect: str
):
    m, h = tmp_path / "model.csv", tmp_path / "human.csv"
    m.write_text(model)
    h.write_text(human)
    opts = FidelityOptions(n_boot=0, **kw)
    out = expect_clean_error(
        lambda: fidelity(m, h, session, opts), ["model.csv", "human.csv"], label=name
    )
    assert expect in out.message, (name, out.message)


def test_fuzz_fidelity_cli_missing_input(tmp_path: Path):
    m = tmp_path / "model.csv"
    m.write_text(LONG)
    out = expect_clean_error(
        lambda: run_cli(["fidelity", str(m), str(tmp_path / "nope.csv")]), ["nope.csv"]
    )
    assert "no such file or directory" in out.message


def test_fuzz_fidelity_cli_output_onto_an_input(tmp_path: Path):
    m, h = tmp_path / "model.csv", tmp_path / "human.csv"
    m.write_text(LONG)
    h.write_text(LONG)
    expect_clean_error(
        lambda: run_cli(["fidelity", str(m), str(h), "--bootstrap", "0", "-o", str(h)]),
        ["human.csv", "--output"],
    )
