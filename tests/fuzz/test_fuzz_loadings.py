"""Fuzz cases of the published human loadings an instrument spec may ship (issue 25):
the ``human_loadings:`` field of ``instrument.yaml`` and its loadings CSV. Each case must end
in one line naming the file (the spec, or the CSV with its line) and the field or column."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from harness import expect_clean_error, shared_session

from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import cli
from psymetrics_core.instruments.spec import load_instrument

SPEC = """\
schema_version: 1
id: tiny
name: Tiny
version: "1"
citation: test
license: {status: test}
item_source: test
forms: {original: items.csv}
response_scales:
  default: {min: 1, max: 5, labels: [a, b, c, d, e]}
scales:
  A: {method: mean}
  B: {method: mean}
prompt: {instruction: Answer.}
"""
ITEMS = (
    "id,text,scale,reverse,flag\n1,one,A,0,\n2,two,A,1,\n3,three,B,0,\n4,four,B,0,\n"
    "5,check,,0,attention_check\n"
)
FIELD = 'human_loadings: {file: loadings.csv, source: "Author (2001), Table 3"}\n'
GOOD = "item,F1,F2\n1,.7,.1\n2,-.6,.0\n3,.1,.8\n4,.0,.7\n"

SPEC_FIELDS = [
    # name, the human_loadings line of the spec, expected fragment (field named)
    (
        "not-a-mapping",
        "human_loadings: loadings.csv\n",
        "field 'human_loadings': expected a mapping {file, source",
    ),
    ("list", "human_loadings: [loadings.csv]\n", "field 'human_loadings': expected a mapping"),
    (
        "missing-file",
        'human_loadings: {source: "A (2001)"}\n',
        "field 'human_loadings.file': is required but missing",
    ),
    (
        "missing-source",
        "human_loadings: {file: loadings.csv}\n",
        "field 'human_loadings.source': is required but missing",
    ),
    (
        "empty-source",
        'human_loadings: {file: loadings.csv, source: "  "}\n',
        "field 'human_loadings.source': expected a non-empty string",
    ),
    (
        "source-number",
        "human_loadings: {file: loadings.csv, source: 2001}\n",
        "field 'human_loadings.source': expected a non-empty string, got 2001",
    ),
    (
        "file-null",
        "human_loadings: {file: null, source: A}\n",
        "field 'human_loadings.file': expected a non-empty string",
    ),
    (
        "unknown-key",
        "human_loadings: {file: loadings.csv, source: A, table: 3}\n",
        "field 'human_loadings.table': unknown field",
    ),
    (
        "n-zero",
        "human_loadings: {file: loadings.csv, source: A, n: 0}\n",
        "field 'human_loadings.n': expected a positive whole number, got 0",
    ),
    (
        "n-bool",
        "human_loadings: {file: loadings.csv, source: A, n: true}\n",
        "field 'human_loadings.n': expected a positive whole number, got True",
    ),
    (
        "n-text",
        "human_loadings: {file: loadings.csv, source: A, n: many}\n",
        "field 'human_loadings.n': expected a positive whole number, got 'many'",
    ),
    (
        "rotation-number",
        "human_loadings: {file: loadings.csv, source: A, rotation: 3}\n",
        "field 'human_loadings.rotation': expected str, got int 3",
    ),
    (
        "file-not-found",
        "human_loadings: {file: absent.csv, source: A}\n",
        "field 'human_loadings.file': loadings file 'absent.csv' not found",
    ),
    (
        "file-is-directory",
        "human_loadings: {file: sub, source: A}\n",
        "field 'human_loadings.file': 'sub'",
    ),
    (
        "file-is-fifo",
        "human_loadings: {file: pipe.csv, source: A}\n",
        "field 'human_loadings.file': 'pipe.csv'",
    ),
]

TABLES = [
    # name, CSV text (bytes: raw), expected fragment (line and column named)
    ("first-column-not-item", "id,F1\n1,.5\n", "row 1: the first column must be 'item', got 'id'"),
    ("no-factor-columns", "item\n1\n", "row 1: no factor columns"),
    ("unnamed-factor", "item,F1,\n1,.5,.4\n", "row 1: column 3 has no factor name"),
    ("factor-twice", "item,F1,F1\n1,.5,.4\n", "row 1, field 'F1': factor 'F1' is named twice"),
    ("factor-named-item", "item,item\n1,.5\n", "row 1, field 'item': factor 'item' is named"),
    ("empty-item-id", GOOD + ",.5,.5\n", "row 6, field 'item': empty item id"),
    ("unknown-item", GOOD + "9,.5,.5\n", "row 6, field 'item': item '9' is not an item"),
    ("item-by-text", "item,F1,F2\none,.5,.5\n", "row 2, field 'item': item 'one' is not an item"),
    (
        "unscored-item",
        GOOD + "5,.1,.1\n",
        "row 6, field 'item': item '5' is not scored (attention_check)",
    ),
    ("item-twice", GOOD + "1,.5,.5\n", "row 6, field 'item': item '1' is listed twice"),
    ("empty-cell", "item,F1,F2\n1,.7,\n", "row 2, field 'F2': empty loading (a blank is not 0"),
    ("short-row", "item,F1,F2\n1,.7\n", "row 2, field 'F2': empty loading"),
    (
        "long-row",
        "item,F1,F2\n1,.7,.1\n2,.7,.1,.3\n",
        "row 3: 4 cells for 3 columns (a loading without a factor column)",
    ),
    ("not-a-number", "item,F1,F2\n1,.7,high\n", "row 2, field 'F2': expected a number, got 'high'"),
    ("decimal-comma", "item;F1\n1;0,7\n", "the first column must be 'item', got 'item;F1'"),
    ("percent", "item,F1,F2\n1,70%,.1\n", "row 2, field 'F1': expected a number, got '70%'"),
    ("nan", "item,F1,F2\n1,nan,.1\n", "row 2, field 'F1': expected a finite loading in [-1.5, 1.5"),
    ("inf", "item,F1,F2\n1,.1,-inf\n", "row 2, field 'F2': expected a finite loading"),
    ("above-bound", "item,F1,F2\n1,1.6,.1\n", "row 2, field 'F1': expected a finite loading in"),
    ("below-bound", "item,F1,F2\n1,.1,-2\n", "got '-2'"),
    ("percent-scale", "item,F1,F2\n1,70,10\n", "row 2, field 'F1': expected a finite loading"),
    (
        "all-zero-factor",
        "item,F1,F2\n1,.7,0\n3,.5,0.0\n",
        "field 'F2': every loading of this factor is 0",
    ),
    ("header-only", "item,F1,F2\n", "holds no loadings"),
    ("empty-file", "", "row 1: the first column must be 'item', got 'nothing'"),
    ("nul-byte", "item,F1\n1,\x00.5\n", "a NUL byte"),
    ("unterminated-quote", 'item,F1\n1,".5\n', "unreadable CSV"),
    ("not-utf8", b"item,F1\n1,.5\xff\n", "UTF-8"),
]


def _instrument(tmp_path: Path, field: str, table: str | bytes | None = GOOD) -> Path:
    d = tmp_path / "tiny"
    d.mkdir()
    (d / "instrument.yaml").write_text(SPEC + field)
    (d / "items.csv").write_text(ITEMS)
    (d / "sub").mkdir()
    os.mkfifo(d / "pipe.csv")
    if isinstance(table, bytes):
        (d / "loadings.csv").write_bytes(table)
    elif table is not None:
        (d / "loadings.csv").write_text(table)
    return d


def test_the_good_table_loads(tmp_path: Path) -> None:
    inst = load_instrument(_instrument(tmp_path, FIELD))
    assert inst.human_loadings is not None and inst.human_loadings.factors == ("F1", "F2")


@pytest.mark.parametrize(("name", "field", "expect"), SPEC_FIELDS, ids=[c[0] for c in SPEC_FIELDS])
def test_fuzz_human_loadings_field(tmp_path: Path, name: str, field: str, expect: str) -> None:
    d = _instrument(tmp_path, field)
    out = expect_clean_error(lambda: load_instrument(d), [str(d / "instrument.yaml")], label=name)
    assert expect in out.message, (name, out.message)


@pytest.mark.parametrize(("name", "text", "expect"), TABLES, ids=[c[0] for c in TABLES])
def test_fuzz_human_loadings_table(tmp_path: Path, name: str, text: object, expect: str) -> None:
    d = _instrument(tmp_path, FIELD, text)  # type: ignore[arg-type]
    out = expect_clean_error(lambda: load_instrument(d), ["loadings.csv"], label=name)
    assert expect in out.message, (name, out.message)


def _validate(d: Path) -> None:
    """``psym validate D`` in process: a non-zero exit becomes the PsymError it printed."""
    res = CliRunner().invoke(cli, ["validate", str(d)], obj=shared_session())
    if res.exit_code == 0:
        return
    if isinstance(res.exception, PsymError):
        raise res.exception
    raise PsymError(" ".join(res.output.strip().splitlines()[-1:]) or repr(res.exception))


@pytest.mark.parametrize("name", ["unknown-item", "above-bound", "all-zero-factor"])
def test_fuzz_psym_validate_checks_the_table(tmp_path: Path, name: str) -> None:
    case = next(c for c in TABLES if c[0] == name)
    d = _instrument(tmp_path, FIELD, case[1])
    out = expect_clean_error(lambda: _validate(d), ["loadings.csv"], label=name)
    assert case[2] in out.message, (name, out.message)


def test_fuzz_psym_validate_refuses_the_kit_placeholder_source(tmp_path: Path) -> None:
    d = _instrument(tmp_path, FIELD.replace("Author (2001), Table 3", "REPLACE: the paper's table"))
    out = expect_clean_error(lambda: _validate(d), ["instrument.yaml"], label="placeholder")
    assert "REPLACE placeholder in human_loadings.source" in out.message, out.message
