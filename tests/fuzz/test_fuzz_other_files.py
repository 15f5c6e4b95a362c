"""Fuzz suite: other files psym reads (validity pairing files, results.json given to
``psym validity``, the plugin catalogue, provenance's file-hash memo, model.safetensors, cached
ONNX layer graphs). Each must end in one ``PsymError`` line naming the file, or, for the memo
and the graph, be rebuilt silently (see ``harness.py``). Split from test_fuzz_inputs.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cases import ALIAS_BOMB
from cases_runfiles import GRAPH_FILES, SAFETENSORS_RAW
from harness import expect_clean_error

# -- validity pairing files, results.json given to psym validity, plugin catalogue ----------------

OTHER_FILES = [
    ("pairs-bomb", "pairs.yaml", ALIAS_BOMB.encode(), "alias"),
    ("pairs-latin1", "pairs.yaml", b"pairs: [" + "\xe9".encode("latin-1") + b"]\n", "UTF-8"),
    ("pairs-list", "pairs.yaml", b"- a\n", "pairs"),
    ("pairs-bad-entry", "pairs.yaml", b"pairs: [3]\n", "pair 1"),
    ("results-array", "results.json", b"[1, 2]", "JSON object"),
    ("results-nan", "results.json", b'{"tasks": NaN}', "NaN"),
    ("results-latin1", "results.json", b'{"a": "' + "\xe9".encode("latin-1") + b'"}', "UTF-8"),
    ("catalogue-bomb", "plugins.yaml", ALIAS_BOMB.encode(), "alias"),
    ("catalogue-latin1", "plugins.yaml", b"plugins: [" + "\xe9".encode("latin-1") + b"]", "UTF-8"),
]


@pytest.mark.parametrize("name, fname, raw, expect", OTHER_FILES, ids=[c[0] for c in OTHER_FILES])
def test_fuzz_other_files(tmp_path: Path, name: str, fname: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.analysis.ecological import load_pairs, read_runs
    from psymetrics_core.pluginsys.catalogue import catalogue

    p = tmp_path / fname
    p.write_bytes(raw)
    call = {
        "pairs.yaml": lambda: load_pairs(p),
        "results.json": lambda: read_runs([tmp_path]),
        "plugins.yaml": lambda: catalogue(p),
    }[fname]
    out = expect_clean_error(call, [fname], label=name)
    assert expect in out.message, out.message


MEMOS = [
    ("binary", bytes(range(256))),
    ("not-json", b"{oops"),
    ("a-list", b"[1, 2, 3]"),
    ("entry-not-object", b'{"PATH": 42}'),
    ("stamp-wrong-type", b'{"PATH": {"stamp": "x", "sha256": "planted"}}'),
    ("sha-not-string", b'{"PATH": {"stamp": STAMP, "sha256": 7}}'),
    ("empty", b""),
    ("sha-not-hex", b'{"PATH": {"stamp": STAMP, "sha256": "planted"}}'),
    ("deep-nesting", b"[" * 100_000 + b"]" * 100_000),
]


@pytest.mark.parametrize("name, raw", MEMOS, ids=[m[0] for m in MEMOS])
def test_fuzz_file_hash_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, raw: bytes
) -> None:
    """A damaged ``file-hashes.json`` (provenance's memo of large files' sha256) is never
    trusted and never an error: the file is hashed again and the memo rewritten."""
    import hashlib
    import json as _json
    import os

    from psymetrics_core.records import provenance

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    big = tmp_path / "weights.bin"
    big.write_bytes(os.urandom(5 << 20))
    st = big.stat()
    stamp = _json.dumps([st.st_size, st.st_mtime_ns, st.st_ino])
    (tmp_path / "cache").mkdir()
    memo = tmp_path / "cache" / "file-hashes.json"
    memo.write_bytes(
        raw.replace(b"PATH", str(big.resolve()).encode()).replace(b"STAMP", stamp.encode())
    )
    monkeypatch.setattr(provenance, "_HASHES", {})
    assert provenance.sha256_file(big) == hashlib.sha256(big.read_bytes()).hexdigest()
    assert _json.loads(memo.read_text())[str(big.resolve())]["stamp"] == _json.loads(stamp)


@pytest.mark.parametrize("name, raw, expect", SAFETENSORS_RAW, ids=[c[0] for c in SAFETENSORS_RAW])
def test_fuzz_safetensors(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    """A damaged ``model.safetensors`` (memory-mapped for ONNX Runtime scoring) is one line
    naming the file (and the tensor), never a traceback or a wrong-shaped array."""
    pytest.importorskip("numpy")
    pytest.importorskip("psymetrics_plugin_llama_engine")  # the optional engine distribution
    from psymetrics_plugin_llama_engine.onnx_llama import read_safetensors

    path = tmp_path / "model.safetensors"
    path.write_bytes(raw)
    out = expect_clean_error(lambda: read_safetensors(path), [str(path)], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, raw", GRAPH_FILES, ids=[c[0] for c in GRAPH_FILES])
def test_fuzz_onnx_graph_file(tmp_path: Path, name: str, raw: bytes) -> None:
    """A damaged cached ONNX layer graph is never trusted and never an error: the graph is
    built again, the file rewritten, and the session takes the layer's inputs."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("psymetrics_plugin_llama_engine")
    from psymetrics_plugin_llama_engine import onnx_llama
    from psymetrics_plugin_llama_engine.native_llama import LlamaShape

    shape = LlamaShape(
        hidden=8, layers=1, heads=2, kv_heads=1, head_dim=4, eps=1e-5, rope_theta=10000.0, tied=True
    )
    path = onnx_llama._graph_path(shape, True, tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    session = onnx_llama._layer_session(shape, True, tmp_path, ort.SessionOptions())
    assert "keep" in {i.name for i in session.get_inputs()}
    assert path.read_bytes() == onnx_llama._layer_graph(shape, True)
