"""Malformed files that psym reads back (the files of a run directory given to ``psym report``
and ``psym export``; the model files ONNX Runtime scoring reads), generated from small valid files
by named mutations (see cases.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from cases import DEEP_JSON, JUNK, LATIN1

# -- run directories read by `psym report` and `psym export` (results.json, samples.jsonl) -------
# Each case edits the bytes of one file of a valid run (a bfi run of two items); ``expect``
# must appear in the one-line error (the field or line, besides the file's name).


def _json_edit(fn: Callable[[Any], None]) -> Callable[[bytes], bytes]:
    def edit(raw: bytes) -> bytes:
        data = json.loads(raw)
        fn(data)
        return json.dumps(data).encode()

    return edit


def _line_edit(fn: Callable[[Any], None]) -> Callable[[bytes], bytes]:
    """Edit the first line of a JSONL file."""

    def edit(raw: bytes) -> bytes:
        first, rest = raw.split(b"\n", 1)
        data = json.loads(first)
        fn(data)
        return json.dumps(data).encode() + b"\n" + rest

    return edit


def _set_path(path: str, value: Any) -> Callable[[Any], None]:
    def fn(data: Any) -> None:
        *parents, last = path.split(".")
        for p in parents:
            data = data[p]
        data[last] = value

    return fn


def _del_path(path: str) -> Callable[[Any], None]:
    def fn(data: Any) -> None:
        *parents, last = path.split(".")
        for p in parents:
            data = data[p]
        del data[last]

    return fn


DEEP = b"[" * 100_000 + b"]" * 100_000
RUN_FILES_RAW: list[tuple[str, str, Callable[[bytes], bytes], str]] = [
    ("results-truncated", "results.json", lambda r: r[: len(r) // 2], "invalid JSON"),
    ("results-empty", "results.json", lambda r: b"", "invalid JSON"),
    (
        "results-latin1",
        "results.json",
        lambda r: r.replace(b'"bfi"', b'"bfi' + LATIN1 + b'"', 1),
        "UTF-8",
    ),
    ("results-binary", "results.json", lambda r: JUNK, "UTF-8"),
    ("results-deep", "results.json", lambda r: DEEP, "nested too deeply"),
    (
        "results-deep-field",
        "results.json",
        lambda r: r.replace(b'"model_args": {', b'"model_args": {"x": ' + DEEP + b", ", 1),
        "nested too deeply",
    ),
    ("results-array", "results.json", lambda r: b"[1, 2]", "JSON object"),
    (
        "results-nan",
        "results.json",
        lambda r: r.replace(b'"seed": ', b'"seed": NaN, "x": ', 1),
        "NaN",
    ),
    ("results-tasks-list", "results.json", _json_edit(_set_path("tasks", [])), "'tasks'"),
    (
        "results-runs-string",
        "results.json",
        _json_edit(_set_path("tasks.bfi.runs", "x")),
        "tasks.bfi.runs",
    ),
    (
        "results-run-not-object",
        "results.json",
        _json_edit(_set_path("tasks.bfi.runs", [3])),
        "tasks.bfi.runs.0",
    ),
    (
        "results-scales-list",
        "results.json",
        _json_edit(_set_path("tasks.bfi.scales", [1])),
        "tasks.bfi.scales",
    ),
    (
        "results-score-text",
        "results.json",
        _json_edit(_set_path("tasks.bfi.scales.extraversion.score", "high")),
        "tasks.bfi.scales.extraversion.score",
    ),
    (
        "results-n-items-text",
        "results.json",
        _json_edit(_set_path("tasks.bfi.scales.extraversion.n_items", "many")),
        "tasks.bfi.scales.extraversion.n_items",
    ),
    ("results-seed-text", "results.json", _json_edit(_set_path("seed", "abc")), "'seed'"),
    ("results-model-number", "results.json", _json_edit(_set_path("model", 5)), "'model'"),
    ("results-settings-list", "results.json", _json_edit(_set_path("settings", [])), "'settings'"),
    ("results-label-object", "results.json", _json_edit(_set_path("label", {"a": 1})), "'label'"),
    ("results-missing-model", "results.json", _json_edit(_del_path("model")), "'model'"),
    (
        "results-missing-runs",
        "results.json",
        _json_edit(_del_path("tasks.bfi.runs")),
        "tasks.bfi.runs",
    ),
    (
        "results-missing-instrument",
        "results.json",
        _json_edit(_del_path("tasks.bfi.instrument")),
        "tasks.bfi.instrument",
    ),
    ("samples-truncated", "samples.jsonl", lambda r: r[: len(r) // 3], "line 1"),
    (
        "samples-latin1",
        "samples.jsonl",
        lambda r: r + b'{"item": "' + LATIN1 + b'"}\n',
        "not UTF-8",
    ),
    ("samples-binary", "samples.jsonl", lambda r: JUNK, "line 1"),
    ("samples-deep-line", "samples.jsonl", lambda r: r + DEEP + b"\n", "line 3"),
    ("samples-array-line", "samples.jsonl", lambda r: r + b"[1, 2]\n", "line 3"),
    (
        "samples-repeat-text",
        "samples.jsonl",
        _line_edit(_set_path("repeat", "x")),
        "line 1: field 'repeat'",
    ),
    (
        "samples-answer-object",
        "samples.jsonl",
        _line_edit(_set_path("answer", {"a": 1})),
        "line 1: field 'answer'",
    ),
    (
        "samples-status-unknown",
        "samples.jsonl",
        _line_edit(_set_path("parse_status", "maybe")),
        "line 1: field 'parse_status'",
    ),
    (
        "samples-meta-list",
        "samples.jsonl",
        _line_edit(_set_path("item_meta", [])),
        "line 1: field 'item_meta'",
    ),
    (
        "samples-probs-text",
        "samples.jsonl",
        _line_edit(_set_path("option_probs", "x")),
        "line 1: field 'option_probs'",
    ),
    (
        "samples-missing-item",
        "samples.jsonl",
        _line_edit(_del_path("item")),
        "line 1: field 'item'",
    ),
    (
        "samples-missing-meta",
        "samples.jsonl",
        _line_edit(_del_path("item_meta")),
        "line 1: field 'item_meta'",
    ),
    ("judge-not-json", "judge.jsonl", lambda r: b"{\n", "line 1"),
    ("judge-missing-fields", "judge.jsonl", lambda r: b'{"task": "bfi"}\n', "line 1: field"),
    ("panel-truncated", "contamination.json", lambda r: b'{"model": ', "invalid JSON"),
    ("panel-latin1", "contamination.json", lambda r: b'{"m": "' + LATIN1 + b'"}', "UTF-8"),
]


def _safetensors(header: Any, data: bytes = b"\x00" * 16) -> bytes:
    """A safetensors file: 8-byte little-endian header length, JSON header, tensor bytes."""
    blob = json.dumps(header).encode()
    return len(blob).to_bytes(8, "little") + blob + data


def _tensor(entry: Any) -> bytes:
    return _safetensors({"t": entry})


# (name, file bytes, expected message part): the model file ONNX Runtime scoring memory-maps
SAFETENSORS_RAW: list[tuple[str, bytes, str]] = [
    ("empty", b"", "not a readable safetensors file"),
    ("junk", JUNK, "header length"),
    ("length-too-big", b"\xff" * 8 + b"{}", "header length"),
    ("length-zero", (0).to_bytes(8, "little") + b"{}", "header length"),
    (
        "header-not-json",
        (3).to_bytes(8, "little") + b"{x}" + b"\x00" * 8,
        "not a readable safetensors file",
    ),
    ("header-list", (2).to_bytes(8, "little") + b"[]", "header is not an object"),
    ("header-truncated", (20).to_bytes(8, "little") + b"[" * 20, "not a readable safetensors"),
    (
        "header-deep",
        len(DEEP_JSON).to_bytes(8, "little") + DEEP_JSON.encode(),
        "not a readable safetensors file",
    ),
    ("header-latin1", (7).to_bytes(8, "little") + b'{"\xe9":1}', "not a readable safetensors"),
    (
        "bf16",
        _tensor({"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}),
        "is BF16; ONNX Runtime",
    ),
    (
        "past-the-end",
        _tensor({"dtype": "F32", "shape": [2], "data_offsets": [0, 64]}),
        "lies outside the file",
    ),
    (
        "size-mismatch",
        _tensor({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}),
        "lies outside the file",
    ),
    (
        "offsets-reversed",
        _tensor({"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}),
        "lies outside the file",
    ),
    (
        "shape-float",
        _tensor({"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}),
        "malformed header entry",
    ),
    (
        "shape-negative",
        _tensor({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}),
        "malformed header entry",
    ),
    (
        "shape-string",
        _tensor({"dtype": "F32", "shape": "2", "data_offsets": [0, 8]}),
        "malformed header entry",
    ),
    (
        "shape-huge",
        _tensor({"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 8]}),
        "lies outside the file",
    ),
    (
        "shape-wraps",
        _tensor({"dtype": "F32", "shape": [2**32, 2**32], "data_offsets": [0, 0]}),
        "lies outside the file",
    ),
    (
        "offsets-short",
        _tensor({"dtype": "F32", "shape": [2], "data_offsets": [0]}),
        "malformed header entry",
    ),
    (
        "offsets-bool",
        _tensor({"dtype": "F32", "shape": [2], "data_offsets": [False, True]}),
        "malformed header entry",
    ),
    ("no-dtype", _tensor({"shape": [2], "data_offsets": [0, 8]}), "malformed header entry"),
    ("entry-list", _tensor(["F32"]), "malformed header entry"),
    ("entry-null", _tensor(None), "malformed header entry"),
]

# (name, bytes) written over a cached ONNX layer graph: never trusted, never an error
GRAPH_FILES: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("junk", JUNK),
    ("text", b"not a graph\n"),
    ("deep", DEEP_JSON.encode()),
]
