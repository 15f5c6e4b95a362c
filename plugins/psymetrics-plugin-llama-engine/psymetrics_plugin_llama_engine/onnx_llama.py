"""The Llama forward pass of ``native_llama`` on ONNX Runtime, for option scoring on a CPU.

Importing torch takes about two seconds on a small machine, longer than the rest of a
questionnaire run's start-up; ONNX Runtime imports in a tenth of that. The graph is one decoder
layer (RMSNorm, grouped-query attention with rotary embeddings over a shared-prefix cache,
SiLU MLP) in standard ONNX operators, built once with the ``onnx`` package and kept in the
cache directory. The weights are not part of it: each layer's weights are fed to the same
session as inputs, straight from the memory-mapped ``model.safetensors`` (no copy; copying
half a gigabyte costs most of a second in fresh pages). A forward pass runs the session once
per layer; the last layer has its own graph that computes queries, attention output and MLP
only at the positions whose next-token distribution is read. Same function as
``LlamaForCausalLM`` within float error (tested against transformers).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from psymetrics_core.api import BackendError, store_quietly
from psymetrics_plugin_llama_engine.native_llama import LlamaShape

__all__ = ["OnnxLlama", "onnx_available", "read_safetensors"]

_GRAPH_VERSION = "2"  # bump when the graph below changes: cached graph files are keyed by it
_OPSET = 23  # RMSNormalization


def onnx_available() -> bool:
    """Whether ONNX Runtime and ``onnx`` are installed (checked without importing them)."""
    from importlib.util import find_spec

    return find_spec("onnxruntime") is not None and find_spec("onnx") is not None


def read_safetensors(path: Path) -> dict[str, Any]:
    """The float32 tensors of a safetensors file as read-only numpy arrays over a memory map.

    Raises :class:`BackendError` naming the file when its header is not a safetensors header
    or a tensor is not float32 or lies outside the file.
    """
    import numpy as np

    try:
        with path.open("rb") as fh:
            size = int.from_bytes(fh.read(8), "little")
            total = path.stat().st_size
            if not 2 <= size <= total - 8:
                raise ValueError(f"header length {size} does not fit a file of {total} bytes")
            header = json.loads(fh.read(size))
        data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    except (OSError, ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise BackendError(f"{path}: not a readable safetensors file ({exc})") from exc
    if not isinstance(header, dict):
        raise BackendError(f"{path}: safetensors header is not an object")
    out: dict[str, Any] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (start, end) = meta["dtype"], meta["shape"], meta["data_offsets"]
            if not all(type(n) is int and n >= 0 for n in [*shape, start, end]):
                raise ValueError("shape and offsets must be non-negative integers")
            count = math.prod(shape)  # exact: a huge shape must not wrap around
        except (KeyError, TypeError, ValueError) as exc:
            raise BackendError(
                f"{path}: tensor {name!r}: malformed header entry (expected dtype, shape and "
                "data_offsets)"
            ) from exc
        if dtype != "F32":
            raise BackendError(
                f"{path}: tensor {name!r} is {dtype}; ONNX Runtime scoring needs F32 "
                "(--model-args native=torch or native=false)"
            )
        if not 0 <= start <= end <= data.shape[0] or end - start != 4 * count:
            raise BackendError(f"{path}: tensor {name!r} lies outside the file")
        out[name] = data[start:end].view(np.float32).reshape(shape)
    return out


def _layer_graph(shape: LlamaShape, last: bool) -> bytes:
    """One decoder layer as a serialised ONNX model (weights are inputs).

    Inputs: ``x`` (batch, seq, hidden); ``cos``/``sin`` (seq, head_dim) of the new positions;
    ``mask`` (seq, past + seq), 0 where attention is allowed and the float32 minimum where not;
    ``past_k``/``past_v`` (1, kv_heads, past, head_dim), one cache broadcast to every row; the
    layer's weights as stored (out, in). The last layer also takes ``keep`` (positions).
    Outputs: ``y`` (batch, seq or kept, hidden) and ``present_k``/``present_v`` (past + new).
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    h, d, nh, kv = shape.hidden, shape.head_dim, shape.heads, shape.kv_heads
    nodes: list[Any] = []
    consts: list[Any] = []

    def op(kind: str, ins: list[str], n_out: int = 1, out: str | None = None, **attrs: Any) -> Any:
        names = [out] if out else [f"t{len(nodes)}_{j}" for j in range(n_out)]
        nodes.append(helper.make_node(kind, ins, names, **attrs))
        return names[0] if n_out == 1 else names

    def const(values: list[int] | float) -> str:
        name = f"c{len(consts)}"
        dtype = np.float32 if isinstance(values, float) else np.int64
        consts.append(numpy_helper.from_array(np.asarray(values, dtype=dtype), name))
        return name

    f32 = TensorProto.FLOAT
    info = helper.make_tensor_value_info
    inputs = [
        info("x", f32, ["b", "s", h]),
        info("cos", f32, ["s", d]),
        info("sin", f32, ["s", d]),
        info("mask", f32, ["s", "t"]),
        info("past_k", f32, [1, kv, "p", d]),
        info("past_v", f32, [1, kv, "p", d]),
    ]
    weights: dict[str, list[Any]] = {
        "ln1": [h],
        "wq": [nh * d, h],
        "wk": [kv * d, h],
        "wv": [kv * d, h],
        "wo": [h, nh * d],
        "ln2": [h],
        "wg": ["i", h],
        "wu": ["i", h],
        "wd": [h, "i"],
    }
    inputs += [info(name, f32, extent) for name, extent in weights.items()]
    if last:
        inputs.append(info("keep", TensorProto.INT64, ["k"]))

    batch = op("Shape", ["x"], start=0, end=1)

    def dims(*tail: int) -> str:
        return str(op("Concat", [batch, const(list(tail))], axis=0))

    flat, flat_heads, axis2 = const([-1, h]), const([-1, nh * d]), const([2])
    q_heads, kv_heads, rows = dims(-1, nh, d), dims(-1, kv, d), dims(-1, h)
    groups, merged = dims(kv, nh // kv, -1, d), dims(nh, -1, d)
    past_len = op("Slice", [op("Shape", ["past_k"]), const([1]), const([4])])
    past_shape = op("Concat", [batch, past_len], axis=0)

    def rms(x: str, w: str) -> str:
        return str(op("RMSNormalization", [x, w], axis=-1, epsilon=shape.eps, stash_type=1))

    def linear(x2d: str, w: str) -> str:
        return str(op("Gemm", [x2d, w], transB=1))

    def split_heads(y: str, to: str) -> str:
        return str(op("Transpose", [op("Reshape", [y, to])], perm=[0, 2, 1, 3]))

    def rope(x: str, cos: str, sin: str) -> str:  # x * cos + rotate_half(x) * sin
        first, second = op("Split", [x], 2, axis=-1, num_outputs=2)
        turned = op("Concat", [op("Neg", [second]), first], axis=-1)
        return str(op("Add", [op("Mul", [x, cos]), op("Mul", [turned, sin])]))

    normed = rms("x", "ln1")
    h2 = op("Reshape", [normed, flat])
    k = rope(split_heads(linear(h2, "wk"), kv_heads), "cos", "sin")
    v = split_heads(linear(h2, "wv"), kv_heads)
    op("Concat", [op("Expand", ["past_k", past_shape]), k], out="present_k", axis=2)
    op("Concat", [op("Expand", ["past_v", past_shape]), v], out="present_v", axis=2)
    x, cos, sin, mask = "x", "cos", "sin", "mask"
    if last:  # the other positions only contribute keys and values
        x = op("Gather", ["x", "keep"], axis=1)
        h2 = op("Reshape", [op("Gather", [normed, "keep"], axis=1), flat])
        cos, sin, mask = (op("Gather", [n, "keep"], axis=0) for n in ("cos", "sin", "mask"))
    q = op("Mul", [rope(split_heads(linear(h2, "wq"), q_heads), cos, sin), const(d**-0.5)])
    # grouped-query attention: the query heads of one key/value head side by side
    keys = op("Unsqueeze", [op("Transpose", ["present_k"], perm=[0, 1, 3, 2]), axis2])
    scores = op("Add", [op("MatMul", [op("Reshape", [q, groups]), keys]), mask])
    probs = op("Softmax", [scores], axis=-1)
    att = op("MatMul", [probs, op("Unsqueeze", ["present_v", axis2])])
    att = op("Transpose", [op("Reshape", [att, merged])], perm=[0, 2, 1, 3])
    att = op("Reshape", [att, flat_heads])  # heads x head_dim need not equal the hidden size
    x = op("Add", [x, op("Reshape", [linear(att, "wo"), rows])])
    h2 = op("Reshape", [rms(x, "ln2"), flat])
    gate = linear(h2, "wg")
    act = op("Mul", [op("Mul", [gate, op("Sigmoid", [gate])]), linear(h2, "wu")])
    op("Add", [x, op("Reshape", [linear(act, "wd"), rows])], out="y")
    outputs = [
        info("y", f32, ["b", "k", h]),
        info("present_k", f32, ["b", kv, "t", d]),
        info("present_v", f32, ["b", kv, "t", d]),
    ]
    graph = helper.make_graph(nodes, "llama_layer", inputs, outputs, initializer=consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    model.ir_version = 10
    return bytes(model.SerializeToString())


def _graph_path(shape: LlamaShape, last: bool, cache: Path) -> Path:
    fields = (
        _GRAPH_VERSION,
        shape.hidden,
        shape.heads,
        shape.kv_heads,
        shape.head_dim,
        repr(shape.eps),
        last,
    )
    key = hashlib.sha256(repr(fields).encode()).hexdigest()[:16]
    return cache / f"llama-layer-{key}.onnx"


def _layer_session(shape: LlamaShape, last: bool, cache: Path, options: Any) -> Any:
    """An ONNX Runtime session of the layer graph, from the graph file in ``cache`` when
    there is one ONNX Runtime accepts; otherwise the graph is built (``onnx``) and stored."""
    import onnxruntime as ort

    path = _graph_path(shape, last, cache)
    cpu = ["CPUExecutionProvider"]
    try:
        return ort.InferenceSession(path.read_bytes(), options, cpu)
    except Exception:  # missing, empty or damaged: ONNX Runtime raises several kinds
        blob = _layer_graph(shape, last)
        store_quietly(path, blob)  # a read-only cache: built again next time
        return ort.InferenceSession(blob, options, cpu)


_LAYER_WEIGHTS = {
    "ln1": "input_layernorm",
    "wq": "self_attn.q_proj",
    "wk": "self_attn.k_proj",
    "wv": "self_attn.v_proj",
    "wo": "self_attn.o_proj",
    "ln2": "post_attention_layernorm",
    "wg": "mlp.gate_proj",
    "wu": "mlp.up_proj",
    "wd": "mlp.down_proj",
}


class OnnxLlama:
    """A Llama model for option scoring: :meth:`forward` over token ids with a broadcast prefix
    cache, :meth:`prefix` to cut a row's cache, :meth:`log_probs` of final hidden states."""

    def __init__(self, shape: LlamaShape, weights: dict[str, Any], threads: int, cache: Path):
        import numpy as np
        import onnxruntime as ort

        self.shape = shape
        try:
            self.embed = weights["model.embed_tokens.weight"]
            self.norm = weights["model.norm.weight"]
            self.lm_head = self.embed if shape.tied else weights["lm_head.weight"]
            self.layers = [
                {k: weights[f"model.layers.{i}.{v}.weight"] for k, v in _LAYER_WEIGHTS.items()}
                for i in range(shape.layers)
            ]
        except KeyError as exc:
            raise BackendError(f"model.safetensors has no tensor {exc}") from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._sessions = [_layer_session(shape, last, cache, options) for last in (False, True)]
        d = shape.head_dim
        self._inv_freq = 1.0 / (
            shape.rope_theta ** (np.arange(0, d, 2, dtype=np.int64).astype(np.float32) / d)
        )
        self._no_past = np.zeros((1, shape.kv_heads, 0, d), dtype=np.float32)

    def forward(
        self, ids: Any, past: list[tuple[Any, Any]] | None = None, keep: Any = None
    ) -> tuple[Any, list[tuple[Any, Any]]]:
        """Final-norm hidden states at positions ``keep`` of the new tokens (all when None)
        and, when there is no ``past``, every layer's keys and values; ``past`` is one
        sequence's cache, broadcast to every row of ``ids`` (the shared prefix)."""
        import numpy as np

        ids = np.asarray(ids, dtype=np.int64)
        b, s = ids.shape
        start = 0 if past is None else int(past[0][0].shape[2])
        freqs = np.arange(start, start + s, dtype=np.float32)[:, None] * self._inv_freq[None, :]
        angles = np.concatenate([freqs, freqs], axis=-1)
        mask = np.zeros((s, start + s), dtype=np.float32)
        mask[:, start:][np.triu(np.ones((s, s), dtype=bool), 1)] = np.finfo(np.float32).min
        shared = {"cos": np.cos(angles), "sin": np.sin(angles), "mask": mask}
        keep = np.arange(s, dtype=np.int64) if keep is None else np.asarray(keep, dtype=np.int64)
        x = self.embed[ids]
        cache: list[tuple[Any, Any]] = []
        wanted = ["y"] if past is not None else ["y", "present_k", "present_v"]
        for i, layer in enumerate(self.layers):
            last = i == len(self.layers) - 1
            pk, pv = (self._no_past, self._no_past) if past is None else past[i]
            feed = {**shared, **layer, "x": x, "past_k": pk, "past_v": pv}
            if last:
                feed["keep"] = keep
            out = self._sessions[last].run(wanted, feed)
            x = out[0]
            if past is None:
                cache.append((out[1], out[2]))
        return self._rms(x, self.norm), cache

    def _rms(self, x: Any, weight: Any) -> Any:
        import numpy as np

        variance = np.mean(np.square(x), axis=-1, keepdims=True)
        return weight * (x / np.sqrt(variance + np.float32(self.shape.eps)))

    @staticmethod
    def prefix(cache: list[tuple[Any, Any]], row: int, n: int) -> list[tuple[Any, Any]]:
        """Row ``row``'s keys and values at its first ``n`` positions, as a broadcastable past."""
        import numpy as np

        def cut(a: Any) -> Any:
            return np.ascontiguousarray(a[row : row + 1, :, :n])

        return [(cut(k), cut(v)) for k, v in cache]

    def log_probs(self, hidden: Any) -> Any:
        """Log-softmax over the vocabulary of final hidden states (rows, hidden): the logits
        minus their log-sum-exp, numpy's pairwise sum keeping it within 4e-7 nats per token of
        a float64 log-softmax (torch's float32 ``log_softmax`` on a CPU is not: see
        ``native_llama``)."""
        import numpy as np

        logits = np.asarray(hidden, dtype=np.float32) @ self.lm_head.T
        top = logits.max(axis=-1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))


def load_onnx(directory: Path, threads: int, cache: Path) -> OnnxLlama:
    """The model in ``directory`` (see ``native_llama.native_support``) on ONNX Runtime."""
    from psymetrics_plugin_llama_engine.native_llama import _shape

    cfg = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    return OnnxLlama(_shape(cfg), read_safetensors(directory / "model.safetensors"), threads, cache)
