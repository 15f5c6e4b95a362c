"""Damaged and planted cache-directory memos: a validated-spec entry (``specs/*.pickle``) and
``installed.json``. Neither is ever trusted or an error: the spec is validated again and its
entry rewritten (nothing in a planted pickle runs); the plugins and versions are found again."""

from __future__ import annotations

from dataclasses import asdict
from importlib import metadata

import pytest
from cases import INSTALLED_MEMOS, SPEC_MEMO_FILES
from test_installed_memo import _truth, cache  # noqa: F401  (fixture)
from test_spec_memo import _validations, bfi_copy  # noqa: F401  (fixture)

from psymetrics_core.instruments import spec
from psymetrics_core.pluginsys import installed, spec_memo
from psymetrics_core.pluginsys.loader import ENTRY_POINT_GROUP


@pytest.mark.parametrize(
    "entry", [c[1] for c in SPEC_MEMO_FILES], ids=[c[0] for c in SPEC_MEMO_FILES]
)
def test_fuzz_spec_memo_entry(bfi_copy, monkeypatch, entry):  # noqa: F811
    good = spec.load_instrument(bfi_copy, reuse=True)
    memo = spec_memo._entry_path(bfi_copy)
    memo.write_bytes(entry)
    monkeypatch.chdir(bfi_copy.parent)
    calls = _validations(monkeypatch)
    again = spec.load_instrument(bfi_copy, reuse=True)
    assert len(calls) == 1 and asdict(again) == asdict(good)
    assert not (bfi_copy.parent / "planted").exists()
    assert spec_memo.recall(bfi_copy) is not None  # rewritten


@pytest.mark.parametrize(
    "raw", [c[1] for c in INSTALLED_MEMOS], ids=[c[0] for c in INSTALLED_MEMOS]
)
def test_fuzz_installed_memo(cache, raw):  # noqa: F811
    cache.mkdir(parents=True, exist_ok=True)
    fp = installed._fingerprint().encode()
    (cache / "installed.json").write_bytes(raw.replace(b"FP", fp))
    assert [tuple(e) for e in installed.plugin_entries(ENTRY_POINT_GROUP)] == _truth()
    assert installed.version("pydantic") == metadata.version("pydantic")
