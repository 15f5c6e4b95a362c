"""Fuzz suite: malformed data files of the bundled plugins (PsychoBench questionnaires, the
housing table, personas, dilemmas, contamination keyword files, projective labels, image
manifests). Each must end in one ``PsymError`` line naming the file, line or field (see
``harness.py``). Split from test_fuzz_inputs.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cases_plugins import (
    BASE_PB,
    DILEMMA_RAW,
    HOUSING_RAW,
    KEYWORD_RAW,
    KEYWORD_TEXTS,
    LABELS_RAW,
    MANIFEST_RAW,
    PB_CASES,
    PB_RAW,
    PERSONA_RAW,
    PNG,
)
from harness import expect_clean_error
from hypothesis import given
from hypothesis import strategies as st
from inputs_shared import FAST

# -- PsychoBench JSON -----------------------------------------------------------------------------


def _pb_import(tmp_path: Path, raw: bytes) -> None:
    from psymetrics_core.instruments.psychobench import import_psychobench

    src = tmp_path / "q.json"
    src.write_bytes(raw)
    import_psychobench(src, tmp_path / "out")


@pytest.mark.parametrize("name, obj, expect", PB_CASES, ids=[c[0] for c in PB_CASES])
def test_fuzz_psychobench(tmp_path: Path, name: str, obj: Any, expect: str) -> None:
    import json

    raw = json.dumps(obj).encode()
    out = expect_clean_error(lambda: _pb_import(tmp_path, raw), ["q.json"], label=name)
    assert expect in out.message, out.message
    assert not (tmp_path / "out").exists() or name in {"cat-unknown-q"}  # nothing half-written


@pytest.mark.parametrize("name, raw, expect", PB_RAW, ids=[c[0] for c in PB_RAW])
def test_fuzz_psychobench_text(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    out = expect_clean_error(lambda: _pb_import(tmp_path, raw), ["q.json"], label=name)
    assert expect in out.message, out.message


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@FAST
@given(
    field=st.sampled_from(["name", "questions", "prompt", "scale", "reverse", "categories"]),
    value=JSON_VALUES,
)
def test_fuzz_psychobench_field_values(tmp_path: Path, field: str, value: Any) -> None:
    """A required field given a value of the wrong kind is an error, never a traceback."""
    import json

    ok = {
        "name": lambda v: isinstance(v, str),
        "questions": lambda v: isinstance(v, dict),
        "prompt": lambda v: isinstance(v, str),
        "scale": lambda v: v == 6,
        "reverse": lambda v: v is None or (isinstance(v, list) and not v),
        "categories": lambda v: False,
    }
    if ok[field](value):
        return
    if field == "categories" and isinstance(value, list) and value:
        return  # a list of categories may be valid; covered by the named cases
    raw = json.dumps([{**BASE_PB, field: value}]).encode()
    expect_clean_error(lambda: _pb_import(tmp_path, raw), ["q.json"], label=f"{field}={value!r}")


# -- plugin data files: housing table, persona, dilemmas ------------------------------------------


@pytest.mark.parametrize("name, raw, expect", HOUSING_RAW, ids=[c[0] for c in HOUSING_RAW])
def test_fuzz_housing_table(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    from psymetrics_plugin_housing.table import read_table

    p = tmp_path / "t.csv"
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_table(p), ["t.csv"], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, fname, raw, expect", PERSONA_RAW, ids=[c[0] for c in PERSONA_RAW])
def test_fuzz_persona(tmp_path: Path, name: str, fname: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.administer.conditions.builtin import _persona

    p = tmp_path / fname
    p.write_bytes(raw)
    out = expect_clean_error(lambda: _persona(str(p)), [fname], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, fname, raw, expect", DILEMMA_RAW, ids=[c[0] for c in DILEMMA_RAW])
def test_fuzz_dilemmas(tmp_path: Path, name: str, fname: str, raw: bytes, expect: str) -> None:
    from psymetrics_plugin_moral_advice.dilemmas import read_dilemma_file

    p = tmp_path / fname
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_dilemma_file(p), [fname], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, raw, expect", KEYWORD_RAW, ids=[c[0] for c in KEYWORD_RAW])
def test_fuzz_keyword_files(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    kw = pytest.importorskip("psymetrics_plugin_contamination.keywords")
    p = tmp_path / "k.csv"
    p.write_bytes(raw)
    out = expect_clean_error(
        lambda: kw.load_keyword_file(p, KEYWORD_TEXTS, "t"), ["k.csv"], label=name
    )
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, raw, expect", LABELS_RAW, ids=[c[0] for c in LABELS_RAW])
def test_fuzz_label_files(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    labels = pytest.importorskip("psymetrics_plugin_projective.labels")
    p = tmp_path / "labels.json"
    p.write_bytes(raw)
    out = expect_clean_error(lambda: labels.read_labels(p), ["labels.json"], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, raw, expect", MANIFEST_RAW, ids=[c[0] for c in MANIFEST_RAW])
def test_fuzz_image_manifests(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    tat = pytest.importorskip("psymetrics_plugin_projective.tat")
    folder = tmp_path / "imgs"
    folder.mkdir()
    (folder / "a.png").write_bytes(PNG)
    (folder / "notes.txt").write_text("hello")
    (tmp_path / "a.png").write_bytes(PNG)  # outside the folder: must not be reachable
    (folder / "manifest.csv").write_bytes(raw)
    out = expect_clean_error(lambda: tat.read_image_folder(folder), ["manifest.csv"], label=name)
    assert expect in out.message, out.message
