"""A small Llama forward pass in plain torch, for loading fast and scoring options near the floor.

transformers' model classes import a large part of torch (dynamo, distributed tensors) before
the first forward pass: seconds on a small CPU machine. For Llama-architecture models stored as
``config.json`` + ``model.safetensors`` + ``tokenizer.json`` (the dequantised SmolLM2 copy is
one), this module loads the weights memory-mapped, the tokenizer with ``tokenizers`` and the
chat template with jinja2, and computes the same function as ``LlamaForCausalLM`` (RMSNorm,
rotary embeddings, grouped-query attention, SiLU MLP; checked against transformers to float
error in the tests). Other architectures go through transformers as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["NativeLlama", "NativeTokenizer", "native_support", "load_native"]


@dataclass(frozen=True)
class LlamaShape:
    """The hyper-parameters of a Llama model that the forward pass needs."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    eps: float
    rope_theta: float
    tied: bool


def native_support(directory: Path) -> str | None:
    """None when ``directory`` holds a model this module runs, else the reason it does not."""
    cfg_path = directory / "config.json"
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        if not (directory / name).is_file():
            return f"no {name}"
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        return f"config.json: {exc}"
    if cfg.get("model_type") != "llama" or cfg.get("architectures") != ["LlamaForCausalLM"]:
        return f"architecture {cfg.get('architectures')}"
    if cfg.get("attention_bias") or cfg.get("mlp_bias") or cfg.get("hidden_act") != "silu":
        return "biases or activation"
    if int(cfg.get("pretraining_tp", 1)) != 1:
        return "pretraining_tp"
    rope = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    if rope.get("rope_type", rope.get("type", "default")) != "default":
        return f"rope type {rope.get('rope_type')}"
    return None


def _shape(cfg: dict[str, Any]) -> LlamaShape:
    rope = cfg.get("rope_parameters") or {}
    heads = int(cfg["num_attention_heads"])
    return LlamaShape(
        hidden=int(cfg["hidden_size"]),
        layers=int(cfg["num_hidden_layers"]),
        heads=heads,
        kv_heads=int(cfg.get("num_key_value_heads") or heads),
        head_dim=int(cfg.get("head_dim") or int(cfg["hidden_size"]) // heads),
        eps=float(cfg.get("rms_norm_eps", 1e-6)),
        rope_theta=float(rope.get("rope_theta", cfg.get("rope_theta", 10000.0))),
        tied=bool(cfg.get("tie_word_embeddings", False)),
    )


class NativeTokenizer:
    """``tokenizer.json`` through ``tokenizers`` and the chat template through jinja2, rendered
    as transformers renders it (sandboxed, trim_blocks, lstrip_blocks, loop controls)."""

    def __init__(self, directory: Path) -> None:
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(directory / "tokenizer.json"))
        cfg_path = directory / "tokenizer_config.json"
        cfg = json.loads(cfg_path.read_text(encoding="utf-8")) if cfg_path.is_file() else {}
        template = cfg.get("chat_template")
        jinja_file = directory / "chat_template.jinja"
        if template is None and jinja_file.is_file():
            template = jinja_file.read_text(encoding="utf-8")
        self.chat_template: str | None = template if isinstance(template, str) else None
        self.special = {k: v for k, v in cfg.items() if k.endswith("_token") and isinstance(v, str)}
        pad = self.special.get("pad_token") or self.special.get("eos_token")
        self.pad_token_id = self._tok.token_to_id(pad) if pad else 0
        self._compiled: Any = None

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` without special tokens."""
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def apply_chat_template(
        self, messages: list[dict[str, Any]], add_generation_prompt: bool = True
    ) -> str:
        """The chat as text, with the generation prompt appended unless told otherwise."""
        if self._compiled is None:
            from datetime import datetime

            from jinja2.exceptions import TemplateError
            from jinja2.ext import loopcontrols
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            def raise_exception(message: str) -> None:
                raise TemplateError(message)

            env = ImmutableSandboxedEnvironment(
                trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
            )
            env.filters["tojson"] = lambda x, **kw: json.dumps(x, ensure_ascii=False, **kw)
            env.globals["raise_exception"] = raise_exception
            env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
            self._compiled = env.from_string(self.chat_template or "")
        return str(
            self._compiled.render(
                messages=messages, add_generation_prompt=add_generation_prompt, **self.special
            )
        )


class NativeLlama:
    """The forward pass of ``LlamaForCausalLM`` over memory-mapped safetensors weights.

    Two exact rearrangements make it cheaper than the textbook form: the rows of each head's
    query and key projections are reordered so that the two halves rotary embeddings pair up
    sit next to each other (the rotation is then one complex multiplication; attention scores
    are dot products, unchanged when queries and keys are reordered alike), and in the last
    layer only the positions whose logits are wanted go through the query, attention output
    and MLP (the other positions only contribute keys and values).
    """

    def __init__(self, shape: LlamaShape, weights: dict[str, Any], device: str) -> None:
        import torch

        self.shape = shape
        self.device = device
        w = {k: v.to(device) for k, v in weights.items()} if device != "cpu" else weights
        self.embed = w["model.embed_tokens.weight"]
        self.norm = w["model.norm.weight"]
        self.lm_head = self.embed if shape.tied else w["lm_head.weight"]
        self.layers = []
        for i in range(shape.layers):
            p = f"model.layers.{i}."
            layer = {n: w[p + f"self_attn.{n}_proj.weight"] for n in "qkvo"}
            layer["q"] = self._pair_halves(layer["q"], shape.heads)
            layer["k"] = self._pair_halves(layer["k"], shape.kv_heads)
            layer.update({n: w[p + f"mlp.{n}_proj.weight"] for n in ("gate", "up", "down")})
            layer["ln1"] = w[p + "input_layernorm.weight"]
            layer["ln2"] = w[p + "post_attention_layernorm.weight"]
            self.layers.append(layer)  # the other tensors stay memory-mapped
        d = shape.head_dim
        self.inv_freq = 1.0 / (
            shape.rope_theta ** (torch.arange(0, d, 2, dtype=torch.int64).float().to(device) / d)
        )

    def _pair_halves(self, weight: Any, heads: int) -> Any:
        """Rows of a query/key projection reordered per head from (first half, second half) to
        interleaved pairs (i, i + head_dim/2), the layout :meth:`_rotate` works on."""
        d = self.shape.head_dim
        cols = weight.shape[1]
        return weight.view(heads, 2, d // 2, cols).transpose(1, 2).reshape(heads * d, cols)

    def _rms(self, x: Any, weight: Any) -> Any:
        import torch.nn.functional as F  # noqa: N812

        return F.rms_norm(x, (x.shape[-1],), weight, self.shape.eps)

    def _rope(self, positions: Any) -> Any:
        """Rotations of the given positions as unit complex numbers, one per frequency."""
        import torch

        freqs = positions.float()[:, None] * self.inv_freq[None, :]
        return torch.polar(torch.ones_like(freqs), freqs)

    @staticmethod
    def _rotate(x: Any, rotation: Any) -> Any:
        """Rotary embedding of ``x`` (..., seq, head_dim) in the interleaved layout."""
        import torch

        pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2).contiguous())
        return torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)

    def forward(
        self, ids: Any, past: list[tuple[Any, Any]] | None = None, keep: Any = None
    ) -> tuple[Any, list[tuple[Any, Any]]]:
        """Hidden states after the final norm (at positions ``keep`` of the new tokens, or all)
        and the keys/values of every layer (past + new). ``past`` is one sequence's cache,
        broadcast to every row of ``ids`` (the shared prefix). ``ids`` and ``keep`` may be
        tensors, numpy arrays or lists."""
        import torch

        with torch.inference_mode():
            ids = torch.as_tensor(ids, dtype=torch.long, device=self.device)
            if keep is not None:
                keep = torch.as_tensor(keep, dtype=torch.long, device=self.device)
            return self._forward(ids, past, keep)

    @staticmethod
    def prefix(cache: list[tuple[Any, Any]], row: int, n: int) -> list[tuple[Any, Any]]:
        """Row ``row``'s keys and values at its first ``n`` positions, as a broadcastable past."""
        return [(k[row : row + 1, :, :n], v[row : row + 1, :, :n]) for k, v in cache]

    def log_probs(self, hidden: Any) -> Any:
        """Log-softmax over the vocabulary of final hidden states (rows, hidden), as numpy.

        Logits minus their ``logsumexp``, not ``torch.log_softmax``: on a CPU the latter's
        float32 kernel reads every token about 8.6e-6 nats high over SmolLM2's 49,152-token
        vocabulary (measured against a float64 log-softmax of the same logits), 4e-4 nats over
        a 48-token reply; ``logsumexp`` is within 1e-6 of float64."""
        import torch

        with torch.inference_mode():
            logits = self.logits(torch.as_tensor(hidden, device=self.device)).float()
            return (logits - torch.logsumexp(logits, dim=-1, keepdim=True)).cpu().numpy()

    def _forward(
        self, ids: Any, past: list[tuple[Any, Any]] | None, keep: Any
    ) -> tuple[Any, list[tuple[Any, Any]]]:
        import torch
        import torch.nn.functional as F  # noqa: N812

        sh = self.shape
        b, s = ids.shape
        start = 0 if past is None else past[0][0].shape[2]
        rotation = self._rope(torch.arange(start, start + s, device=ids.device))
        mask = torch.ones(s, s, dtype=torch.bool, device=ids.device).tril()
        if past is not None:
            mask = torch.cat([torch.ones(s, start, dtype=torch.bool, device=ids.device), mask], 1)
        x = F.embedding(ids, self.embed)
        nq = sh.heads * sh.head_dim
        cache: list[tuple[Any, Any]] = []
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            h = self._rms(x, layer["ln1"])
            k = (h @ layer["k"].T).view(b, s, sh.kv_heads, sh.head_dim).transpose(1, 2)
            v = (h @ layer["v"].T).view(b, s, sh.kv_heads, sh.head_dim).transpose(1, 2)
            k = self._rotate(k, rotation)
            if past is not None:
                pk, pv = past[i]
                k = torch.cat([pk.expand(b, -1, -1, -1), k], dim=2)
                v = torch.cat([pv.expand(b, -1, -1, -1), v], dim=2)
            cache.append((k, v))
            rot, m = rotation, mask
            if i == last and keep is not None:  # only the kept positions need more than k, v
                rot, m = rotation[keep], mask[keep]
                x, h = x[:, keep], h[:, keep]
            q = (h @ layer["q"].T).view(b, h.shape[1], sh.heads, sh.head_dim).transpose(1, 2)
            q = self._rotate(q, rot)
            a = F.scaled_dot_product_attention(
                q, k, v, attn_mask=m, enable_gqa=sh.heads != sh.kv_heads
            )
            x = x + a.transpose(1, 2).reshape(b, h.shape[1], nq) @ layer["o"].T
            h = self._rms(x, layer["ln2"])
            x = x + (F.silu(h @ layer["gate"].T) * (h @ layer["up"].T)) @ layer["down"].T
        return self._rms(x, self.norm), cache

    def logits(self, hidden: Any) -> Any:
        """Vocabulary logits of final hidden states."""
        return hidden @ self.lm_head.T


def load_native(directory: Path, device: str = "cpu") -> tuple[NativeLlama, NativeTokenizer]:
    """Model and tokenizer from ``directory`` (see :func:`native_support`)."""
    from safetensors.torch import load_file

    cfg = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    weights = load_file(str(directory / "model.safetensors"))  # memory-mapped
    return NativeLlama(_shape(cfg), weights, device), NativeTokenizer(directory)
