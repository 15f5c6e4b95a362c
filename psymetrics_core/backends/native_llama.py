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

    def apply_chat_template(self, messages: list[dict[str, Any]]) -> str:
        """The chat as text with the generation prompt appended."""
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
            self._compiled.render(messages=messages, add_generation_prompt=True, **self.special)
        )


class NativeLlama:
    """The forward pass of ``LlamaForCausalLM`` over memory-mapped safetensors weights."""

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
            layer.update({n: w[p + f"mlp.{n}_proj.weight"] for n in ("gate", "up", "down")})
            layer["ln1"] = w[p + "input_layernorm.weight"]
            layer["ln2"] = w[p + "post_attention_layernorm.weight"]
            self.layers.append(layer)  # no copies: the tensors stay memory-mapped
        d = shape.head_dim
        self.inv_freq = 1.0 / (
            shape.rope_theta ** (torch.arange(0, d, 2, dtype=torch.int64).float().to(device) / d)
        )

    def _rms(self, x: Any, weight: Any) -> Any:
        import torch

        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.shape.eps)
        return weight * h.to(x.dtype)

    def _rope(self, positions: Any, dtype: Any) -> tuple[Any, Any]:
        import torch

        freqs = positions.float()[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype), emb.sin().to(dtype)

    @staticmethod
    def _rotate(x: Any, cos: Any, sin: Any) -> Any:
        import torch

        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin

    def forward(
        self, ids: Any, past: list[tuple[Any, Any]] | None = None, keep: Any = None
    ) -> tuple[Any, list[tuple[Any, Any]]]:
        """Hidden states after the final norm (at positions ``keep`` of the new tokens, or all)
        and the keys/values of every layer (past + new). ``past`` is one sequence's cache,
        broadcast to every row of ``ids`` (the shared prefix)."""
        import torch
        import torch.nn.functional as F  # noqa: N812

        sh = self.shape
        b, s = ids.shape
        start = 0 if past is None else past[0][0].shape[2]
        cos, sin = self._rope(torch.arange(start, start + s, device=ids.device), self.embed.dtype)
        if past is None:
            mask = None
        else:
            causal = torch.ones(s, s, dtype=torch.bool, device=ids.device).tril()
            mask = torch.cat([torch.ones(s, start, dtype=torch.bool, device=ids.device), causal], 1)
        x = F.embedding(ids, self.embed)
        rep = sh.heads // sh.kv_heads
        nq = sh.heads * sh.head_dim
        cache: list[tuple[Any, Any]] = []
        for i, layer in enumerate(self.layers):
            h = self._rms(x, layer["ln1"])
            q, k, v = h @ layer["q"].T, h @ layer["k"].T, h @ layer["v"].T
            q = q.view(b, s, sh.heads, sh.head_dim).transpose(1, 2)
            k = k.view(b, s, sh.kv_heads, sh.head_dim).transpose(1, 2)
            v = v.view(b, s, sh.kv_heads, sh.head_dim).transpose(1, 2)
            q, k = self._rotate(q, cos, sin), self._rotate(k, cos, sin)
            if past is not None:
                pk, pv = past[i]
                k = torch.cat([pk.expand(b, -1, -1, -1), k], dim=2)
                v = torch.cat([pv.expand(b, -1, -1, -1), v], dim=2)
            cache.append((k, v))
            if rep > 1:
                k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None)
            x = x + a.transpose(1, 2).reshape(b, s, nq) @ layer["o"].T
            h = self._rms(x, layer["ln2"])
            x = x + (F.silu(h @ layer["gate"].T) * (h @ layer["up"].T)) @ layer["down"].T
        if keep is not None:
            x = x[:, keep]
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
