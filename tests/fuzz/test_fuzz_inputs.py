"""Fuzz suite (issue 14): hundreds of malformed inputs across every loader and CLI input surface.

Each input must end in one ``PsymError`` line naming the file, line or field, within a time and
memory bound (see ``harness.py``), never in a traceback, a hang or a silent success. Most cases
call the loaders in-process (fast); ``test_fuzz_cli_sample`` runs a sample through the real
``psym`` command in a subprocess under an address-space limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cases import (
    ALIAS_BOMB,
    BASE_SPEC,
    GENERATIONS_RAW,
    ITEMS_RAW,
    RESPONSES_RAW,
    SPEC_EDITS,
    SPEC_RAW,
    dump_spec,
)
from cases_plugins import BASE_PB
from harness import expect_clean_error, shared_session
from hypothesis import given
from hypothesis import strategies as st
from inputs_shared import FAST, all_case_count, spec_dir


def test_suite_has_at_least_300_inputs() -> None:
    assert all_case_count() >= 300, all_case_count()


def test_bases_are_valid(tmp_path: Path) -> None:
    """Every mutation starts from an input that loads: the failures below are the mutations'."""
    from psymetrics_core.instruments.psychobench import import_psychobench
    from psymetrics_core.instruments.spec import load_instrument

    inst = load_instrument(spec_dir(tmp_path, dump_spec(BASE_SPEC)))
    assert [it.id for it in inst.items] == ["1", "2"]
    (tmp_path / "q.json").write_text(__import__("json").dumps([BASE_PB]))
    assert import_psychobench(tmp_path / "q.json", tmp_path / "out").tasks == ["pbi-toy"]


# -- instrument YAML and item CSV -----------------------------------------------------------------


@pytest.mark.parametrize("name, edit, field", SPEC_EDITS, ids=[c[0] for c in SPEC_EDITS])
def test_fuzz_spec_fields(tmp_path: Path, name: str, edit: Any, field: str) -> None:
    from psymetrics_core.instruments.spec import load_instrument

    d = spec_dir(tmp_path, dump_spec(edit(BASE_SPEC)))
    expect_clean_error(lambda: load_instrument(d), ["instrument.yaml", ".csv"], label=name)


@pytest.mark.parametrize("name, raw, expect", SPEC_RAW, ids=[c[0] for c in SPEC_RAW])
def test_fuzz_spec_text(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.instruments.spec import load_instrument

    d = spec_dir(tmp_path, raw)
    out = expect_clean_error(lambda: load_instrument(d), ["instrument.yaml"], label=name)
    assert expect in out.message or "instrument.yaml" in expect, out.message


@pytest.mark.parametrize("name, raw, expect", ITEMS_RAW, ids=[c[0] for c in ITEMS_RAW])
def test_fuzz_item_csv(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.instruments.spec import load_instrument

    spec = dict(BASE_SPEC)
    if "response_scale" in name:
        pass
    d = spec_dir(tmp_path, dump_spec(spec), raw)
    out = expect_clean_error(lambda: load_instrument(d), ["items.csv"], label=name)
    assert expect in out.message, out.message


@FAST
@given(
    cell=st.text(
        alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
        max_size=40,
    ).filter(
        lambda s: (
            s.strip().lower()
            not in {
                "",
                "0",
                "1",
                "true",
                "false",
                "yes",
                "no",
                "y",
                "n",
                "r",
                "reverse",
                "reversed",
            }
        )
    )
)
def test_fuzz_item_reverse_cells(tmp_path: Path, cell: str) -> None:
    """Any reverse value outside the accepted words is an error naming the field."""
    import csv
    import io

    from psymetrics_core.instruments.spec import load_instrument

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerows([["id", "text", "scale", "reverse"], ["1", "A", "alpha", cell]])
    d = spec_dir(tmp_path, dump_spec(BASE_SPEC), buf.getvalue().encode())
    expect_clean_error(lambda: load_instrument(d), ["reverse"], label=repr(cell))


def test_fuzz_spec_over_size_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from psymetrics_core.instruments.spec import load_instrument

    d = spec_dir(tmp_path, dump_spec(BASE_SPEC) + b"# " + b"x" * 4000 + b"\n")
    monkeypatch.setenv("PSYM_MAX_INPUT_BYTES", "2000")
    out = expect_clean_error(lambda: load_instrument(d), ["instrument.yaml"], label="size")
    assert "limit" in out.message


def test_fuzz_instruments_path_bomb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``psym list`` with an alias bomb on PSYM_INSTRUMENTS_PATH reports it and lists the rest."""
    from click.testing import CliRunner

    from psymetrics_core.cli import cli

    spec_dir(tmp_path, ALIAS_BOMB.encode())
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(tmp_path))
    r = CliRunner().invoke(cli, ["list"])  # a fresh session of this invocation reads the path
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert "bfi" in r.output and "alias" in r.output, r.output[-500:]


# -- responses CSV (psym score) -------------------------------------------------------------------


@pytest.fixture(scope="module")
def installed() -> Any:
    """One session of the installed plugins for this module's read-only look-ups."""

    return shared_session()


@pytest.fixture(scope="module")
def bfi(installed: Any) -> Any:
    return installed.get_instrument("bfi")


@pytest.mark.parametrize("name, raw, expect", RESPONSES_RAW, ids=[c[0] for c in RESPONSES_RAW])
def test_fuzz_responses_csv(tmp_path: Path, bfi: Any, name: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.administer.answer_files import read_responses

    p = tmp_path / "responses.csv"
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_responses(p, bfi), ["responses.csv"], label=name)
    assert expect in out.message, out.message


@FAST
@given(
    value=st.one_of(
        st.integers().filter(lambda v: not 1 <= v <= 5).map(str),
        st.text(alphabet="abcxyz!?-+. ", min_size=1, max_size=12).filter(
            lambda s: s.strip() not in {"", "1", "2", "3", "4", "5"}
        ),
        st.floats(allow_nan=True, allow_infinity=True)
        .filter(lambda f: not (f == f and float(f).is_integer() and 1 <= f <= 5))
        .map(repr),
    ),
    rows=st.integers(min_value=0, max_value=5),
)
def test_fuzz_responses_values(tmp_path: Path, bfi: Any, value: str, rows: int) -> None:
    """A response that is not a value of the scale is always an error naming its line."""
    import csv
    import io

    from psymetrics_core.administer.answer_files import read_responses

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["respondent", "item", "response"])
    for i in range(rows):
        w.writerow(["A", str(i + 1), "3"])
    w.writerow(["A", "40", value])
    p = tmp_path / "r.csv"
    p.write_text(buf.getvalue())
    expect_clean_error(lambda: read_responses(p, bfi), [f"line {rows + 2}"], label=repr(value))


def test_fuzz_score_missing_form(tmp_path: Path, installed: Any) -> None:
    from psymetrics_core.administer.answers import score_responses

    p = tmp_path / "r.csv"
    p.write_text("respondent,item,response\nA,1,3\n")
    expect_clean_error(
        lambda: score_responses("bfi", p, installed, form="alternate"), ["alternate"]
    )


@pytest.mark.parametrize(
    "name, filename, raw, expect", GENERATIONS_RAW, ids=[c[0] for c in GENERATIONS_RAW]
)
def test_fuzz_generations(
    tmp_path: Path, name: str, filename: str, raw: bytes, expect: str, installed: Any
) -> None:
    """Generations of a free-text task (``psym score --task refletter``): one line naming it."""
    from psymetrics_core.administer.answer_files import read_generations

    task = installed.get_instrument("refletter")
    p = tmp_path / filename
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_generations(p, task), [filename], label=name)
    assert expect in out.message, out.message


# -- JSONL samples (psym analyze): see test_fuzz_rundirs.py (damaged files of a valid run) -------


@pytest.mark.parametrize("name, raw, expect", RESPONSES_RAW, ids=[c[0] for c in RESPONSES_RAW])
def test_fuzz_analyze_responses_csv(
    tmp_path: Path, bfi: Any, name: str, raw: bytes, expect: str
) -> None:
    """``psym analyze --responses`` reads through the same reader as ``psym score``: the same
    junk gives the same one-line error naming the file."""
    from psymetrics_core.analysis.responses import read_long

    p = tmp_path / "responses.csv"
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_long(p, bfi), ["responses.csv"], label=name)
    assert expect in out.message, out.message
