"""Fuzz suite, studies: damaged cache export files (``psym cache import``).

Every case must end in one ``PsymError`` line naming the file, the line and the field where
there is one (``harness.expect_clean_error``: no other exception, one line, within the time and
memory bounds); special files are private FIFOs, directories and symlinks in ``tmp_path``.
Split from test_fuzz_studies.py, which counts its cases.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error
from studies_shared import BIG_INT, DEEP_ARRAY, DEEP_OBJECT, SPECIAL

GOOD_RESPONSE = json.dumps({"text": "3", "option_logprobs": None, "meta": {}})


def _cache_line(**changes: Any) -> str:
    row: dict[str, Any] = {
        "key": "a" * 64,
        "model": "m",
        "mode": "generate",
        "response": GOOD_RESPONSE,
        "created": 1.0,
    }
    for k, v in changes.items():
        if v is _DROP:
            row.pop(k)
        else:
            row[k] = v
    return json.dumps(row)


_DROP = object()


def _lines(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


IMPORT_CASES: list[tuple[str, str, bytes, str]] = [
    ("not-utf8", "x.jsonl", b'{"key": "caf\xe9"}\n', "line 1: not UTF-8"),
    ("binary-junk", "x.jsonl", bytes(range(1, 256)) * 4, "line 1"),
    ("nested-array-100k", "x.jsonl", DEEP_ARRAY.encode() + b"\n", "line 1: invalid JSON"),
    ("nested-object-100k", "x.jsonl", DEEP_OBJECT.encode() + b"\n", "line 1: invalid JSON"),
    (
        "response-nested-100k",
        "x.jsonl",
        _lines(_cache_line(response=DEEP_ARRAY)),
        "field 'response'",
    ),
    (
        "huge-int",
        "x.jsonl",
        _lines(_cache_line(created=0).replace("0}", f"{BIG_INT}}}")),
        "line 1",
    ),
    ("nan", "x.jsonl", _lines(_cache_line().replace("1.0", "NaN")), "line 1"),
    (
        "infinite-created",
        "x.jsonl",
        _lines(_cache_line().replace("1.0", "1e999")),
        "field 'created'",
    ),
    ("not-object", "x.jsonl", b"[1, 2]\n", "line 1: expected a JSON object"),
    ("missing-key", "x.jsonl", _lines(_cache_line(key=_DROP)), "field 'key'"),
    ("missing-model", "x.jsonl", _lines(_cache_line(model=_DROP)), "field 'model'"),
    ("missing-response", "x.jsonl", _lines(_cache_line(response=_DROP)), "field 'response'"),
    ("extra-field", "x.jsonl", _lines(_cache_line(extra="x")), "field 'extra'"),
    ("key-short", "x.jsonl", _lines(_cache_line(key="abc")), "field 'key'"),
    ("key-int", "x.jsonl", _lines(_cache_line(key=5)), "field 'key'"),
    ("model-list", "x.jsonl", _lines(_cache_line(model=["m"])), "field 'model'"),
    ("created-string", "x.jsonl", _lines(_cache_line(created="yesterday")), "field 'created'"),
    (
        "response-object",
        "x.jsonl",
        _lines(_cache_line(response={"text": "3"})),
        "field 'response'",
    ),
    ("response-not-json", "x.jsonl", _lines(_cache_line(response="{nope")), "field 'response'"),
    (
        "response-text-int",
        "x.jsonl",
        _lines(_cache_line(response='{"text": 3, "option_logprobs": null, "meta": {}}')),
        "field 'response'",
    ),
    ("response-list", "x.jsonl", _lines(_cache_line(response="[]")), "field 'response'"),
    ("bad-second-line", "x.jsonl", _lines(_cache_line(), "{"), "line 2"),
    (
        "truncated-gzip",
        "x.jsonl.gz",
        gzip.compress(_lines(_cache_line()) * 50)[:40],
        "gzip",
    ),
    ("not-gzip", "x.jsonl.gz", _lines(_cache_line()), "gzip"),
    ("gzip-not-utf8", "x.jsonl.gz", gzip.compress(b'{"key": "\xff"}\n'), "line 1"),
    ("gzip-nested-100k", "x.jsonl.gz", gzip.compress(DEEP_ARRAY.encode()), "line 1"),
]


@pytest.fixture()
def cache(tmp_path: Path) -> Iterator[Any]:
    from psymetrics_core.backends.cache import ResponseCache

    c = ResponseCache(tmp_path / "cache.sqlite")
    yield c
    c.close()


@pytest.mark.parametrize("name, fname, raw, expect", IMPORT_CASES, ids=[c[0] for c in IMPORT_CASES])
def test_fuzz_cache_import(
    cache: Any, tmp_path: Path, name: str, fname: str, raw: bytes, expect: str
) -> None:
    from psymetrics_core.backends.cache_transfer import import_cache

    path = tmp_path / fname
    path.write_bytes(raw)
    out = expect_clean_error(lambda: import_cache(cache, path), [str(path)], label=name)
    assert expect in out.message, out.message
    assert cache.stats().entries == 0  # a damaged file adds nothing


IMPORT_SPECIAL = [c for c in SPECIAL if c[0] != "over-size-cap-50mb-field"]


@pytest.mark.parametrize("name, make, expect", IMPORT_SPECIAL, ids=[c[0] for c in IMPORT_SPECIAL])
def test_fuzz_cache_import_special_files(
    cache: Any, tmp_path: Path, name: str, make: Any, expect: str
) -> None:
    from psymetrics_core.backends.cache_transfer import import_cache

    path = make(tmp_path)
    out = expect_clean_error(lambda: import_cache(cache, path), [str(path)], label=name)
    assert expect in out.message, out.message


def test_fuzz_cache_import_line_over_cap(
    cache: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from psymetrics_core.backends.cache_transfer import import_cache

    monkeypatch.setenv("PSYM_MAX_INPUT_BYTES", "4096")
    for fname, raw in (("x.jsonl", b"x" * 10_000), ("x.jsonl.gz", gzip.compress(b"x" * 10_000))):
        path = tmp_path / fname
        path.write_bytes(raw)
        out = expect_clean_error(lambda p=path: import_cache(cache, p), [str(path)])  # type: ignore[misc]
        assert "line 1" in out.message and "limit" in out.message
