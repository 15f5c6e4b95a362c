"""Installed specs are validated once (``spec_memo``): a later process takes the instrument
while the spec, its item files and the validating code keep their stamps, and validates again
as soon as any of them changes; a damaged or foreign memo is never trusted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from psymetrics_core.base.errors import SpecError
from psymetrics_core.instruments import spec
from psymetrics_core.pluginsys import spec_memo

REPO = Path(__file__).resolve().parents[1]
BFI = REPO / "plugins" / "psymetrics-plugin-bfi" / "psymetrics_plugin_bfi" / "instruments" / "bfi"


@pytest.fixture
def bfi_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the BFI spec, and a private cache directory."""
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "bfi"
    shutil.copytree(BFI, folder)
    return folder / "instrument.yaml"


def _validations(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Records each full validation of a spec (``spec._build``)."""
    calls: list[Path] = []
    real = spec._build

    def spy(path, raw):
        calls.append(path)
        return real(path, raw)

    monkeypatch.setattr(spec, "_build", spy)
    return calls


def test_a_memoised_spec_is_the_validated_one(bfi_copy, monkeypatch):
    calls = _validations(monkeypatch)
    first = spec.load_instrument(bfi_copy, reuse=True)
    again = spec.load_instrument(bfi_copy, reuse=True)
    assert len(calls) == 1  # the second load took the memo
    assert asdict(again) == asdict(first) == asdict(spec.load_instrument(bfi_copy))
    assert again.form_files == {"original": "items.csv"}
    assert len(calls) == 2  # reuse=False (psym validate, plugin tests) always validates


def test_the_recalled_instrument_has_the_callers_path(bfi_copy, monkeypatch):
    spec.load_instrument(bfi_copy, reuse=True)
    monkeypatch.chdir(bfi_copy.parent)
    calls = _validations(monkeypatch)
    inst = spec.load_instrument(Path("instrument.yaml"), reuse=True)
    assert not calls and inst.spec_path == Path("instrument.yaml")


def test_an_edited_item_file_is_validated_again(bfi_copy, monkeypatch):
    assert not spec.load_instrument(bfi_copy, reuse=True).items[0].reverse
    items = bfi_copy.parent / "items.csv"
    text = items.read_text(encoding="utf-8")
    assert "\n1,Is talkative,extraversion,0\n" in text  # BFI item 1, keyed forward
    items.write_text(text.replace(",extraversion,0\n", ",extraversion,1\n", 1), encoding="utf-8")
    calls = _validations(monkeypatch)
    inst = spec.load_instrument(bfi_copy, reuse=True)
    assert len(calls) == 1 and inst.items[0].reverse  # the new keying, not the memo's


def test_an_edited_spec_that_no_longer_validates_fails_every_time(bfi_copy):
    spec.load_instrument(bfi_copy, reuse=True)
    text = bfi_copy.read_text(encoding="utf-8")
    bfi_copy.write_text(text.replace("id: bfi", "id: 'Not An Id!'", 1), encoding="utf-8")
    for _ in range(2):
        with pytest.raises(SpecError, match="instrument.yaml"):
            spec.load_instrument(bfi_copy, reuse=True)


def test_a_changed_dependency_stamp_invalidates(bfi_copy, monkeypatch, tmp_path):
    """Code files are dependencies like the spec's: one whose stamp changes (an upgraded
    pydantic, an edited psymetrics module) makes every memo stale."""
    extra = tmp_path / "validator_code.py"
    extra.write_text("x = 1\n")
    real = spec_memo._code_files
    monkeypatch.setattr(spec_memo, "_code_files", lambda: [*real(), extra])
    spec.load_instrument(bfi_copy, reuse=True)
    extra.write_text("x = 22\n")
    calls = _validations(monkeypatch)
    spec.load_instrument(bfi_copy, reuse=True)
    assert len(calls) == 1


def test_the_code_stamps_cover_the_validators():
    import psymetrics_core.instruments.schema  # noqa: F401  (loaded when a spec is validated)

    files = {str(p) for p in spec_memo._code_files()}
    core = REPO / "psymetrics_core"
    for f in ("spec.py", "types.py", "records/instrument.py", "spec_scoring.py", "norms.py"):
        assert str(core / f) in files, f
    for package in ("yaml", "pydantic", "pydantic_core", "jinja2"):
        assert any(f"/{package}/__init__.py" in f for f in files), package


def test_a_cached_psym_eval_imports_neither_pydantic_nor_yaml(tmp_path):
    """The second `psym eval` of a task takes its spec from the memo: no YAML parsing and no
    pydantic import (a fifth of a cached re-run)."""
    code = """
import sys
from psymetrics_core.administer.runner import resolve_tasks
from psymetrics_core.pluginsys.session import Session
print(resolve_tasks(["bfi", "mfq"], Session())[0].id)
print(",".join(sorted({m.split(".")[0] for m in sys.modules} & {"yaml", "pydantic"})) or "-")
"""
    env = {**__import__("os").environ, "PSYM_CACHE_DIR": str(tmp_path / "cache")}
    outs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        ).stdout.split()  # fmt: skip
        for _ in range(2)
    ]
    assert outs[0][0] == outs[1][0] == "bfi"
    assert outs[0][-1] == "pydantic,yaml"  # the first process parsed and validated
    assert outs[1][-1] == "-"
