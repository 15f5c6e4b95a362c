"""Instrument spec validation: every error names the file, the line and the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.base.errors import SpecError
from psymetrics_core.cli import cli
from psymetrics_core.instruments.spec import load_instrument

REPO = Path(__file__).resolve().parents[2]
BFI = REPO / "plugins/psymetrics-plugin-bfi/psymetrics_plugin_bfi/instruments/bfi"


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    dst = tmp_path / "bfi"
    shutil.copytree(BFI, dst)
    return dst


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _error(spec: Path) -> str:
    with pytest.raises(SpecError) as exc:
        load_instrument(spec)
    return str(exc.value)


def test_shipped_specs_are_valid():
    inst = load_instrument(BFI)
    assert inst.id == "bfi" and len(inst.items) == 44


def test_out_of_range_reverse_flag_names_line_and_field(spec: Path):
    _edit(spec / "items.csv", "6,Is reserved,extraversion,1", "6,Is reserved,extraversion,maybe")
    msg = _error(spec)
    assert "items.csv, row 7, field 'reverse'" in msg and "'maybe'" in msg


def test_unknown_scale_in_csv(spec: Path):
    _edit(spec / "items.csv", "1,Is talkative,extraversion,0", "1,Is talkative,extroversion,0")
    msg = _error(spec)
    assert "row 2, field 'scale'" in msg and "unknown scale 'extroversion'" in msg


def test_duplicate_item_id(spec: Path):
    _edit(spec / "items.csv", "3,Does a thorough job", "2,Does a thorough job")
    assert "duplicate item id '2'" in _error(spec)


def test_missing_column(spec: Path):
    _edit(spec / "items.csv", "id,text,scale,reverse", "id,text,scale,reversed")
    assert "missing column 'reverse'" in _error(spec)


def test_wrong_number_of_labels(spec: Path):
    _edit(spec / "instrument.yaml", "Agree a little,\n", "\n")
    msg = _error(spec)
    assert "field 'response_scales.default.labels'" in msg and "expected 5 labels" in msg


def test_missing_citation(spec: Path):
    text = (spec / "instrument.yaml").read_text()
    start = text.index("citation:")
    end = text.index("license:")
    (spec / "instrument.yaml").write_text(text[:start] + text[end:])
    assert "field 'citation'" in _error(spec)


def test_bad_scoring_method(spec: Path):
    _edit(
        spec / "instrument.yaml", "  openness:\n    method: mean", "  openness:\n    method: median"
    )
    assert "field 'scales.openness.method'" in _error(spec)


def test_template_syntax_error(spec: Path):
    _edit(spec / "instrument.yaml", "Your answer{{ eos }}", "Your answer{{ eos }")
    assert "field 'prompt.template'" in _error(spec)


def test_invalid_yaml_names_line(spec: Path):
    (spec / "instrument.yaml").write_text("id: [unclosed\nname: x\n")
    assert "invalid YAML" in _error(spec)


def test_scale_without_items(spec: Path):
    _edit(
        spec / "instrument.yaml",
        "  openness:\n",
        "  humility: {method: mean}\n  openness:\n",
    )
    assert "field 'scales.humility'" in _error(spec)


def test_psym_validate_prints_one_line_error(spec: Path):
    _edit(spec / "items.csv", "1,Is talkative,extraversion,0", "1,,extraversion,0")
    r = CliRunner().invoke(cli, ["validate", str(spec)], standalone_mode=False)
    assert isinstance(r.exception, SpecError)
    assert "row 2, field 'text'" in str(r.exception)


def test_psym_validate_ok(spec: Path):
    r = CliRunner().invoke(cli, ["validate", str(spec)])
    assert r.exit_code == 0 and "ok: task 'bfi'" in r.output


@pytest.mark.parametrize(
    "model, field, bad, message",
    [
        ("LicenseSpec", "redistributable", "yes", "expected true, false or null"),
        ("PromptSpec", "template", 12, "expected a string (a Jinja template), got int"),
        ("ScaleSpec", "norms", {"group": "G"}, "expected a list of norm groups"),
    ],
)
def test_optional_fields_take_null_or_their_kind_only(model, field, bad, message):
    """The three optional fields sharing ``records.instrument._optional``: null and a value of
    their kind pass unchanged; anything else is the field's own one-line message."""
    from pydantic import ValidationError

    from psymetrics_core.instruments import schema as instrument

    cls = getattr(instrument, model)
    base = {"LicenseSpec": {"status": "x"}, "PromptSpec": {"instruction": "x"}, "ScaleSpec": {}}
    good = {"redistributable": False, "template": "{{ item }}", "norms": []}[field]
    assert getattr(cls.model_validate({**base[model], field: None}), field) is None
    assert getattr(cls.model_validate({**base[model], field: good}), field) == good
    with pytest.raises(ValidationError) as exc:
        cls.model_validate({**base[model], field: bad})
    err = exc.value.errors()[0]
    assert err["loc"] == (field,) and str(err["ctx"]["error"]) == message
