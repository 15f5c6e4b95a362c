"""Default backends: OpenAI-compatible APIs and lm-eval.

The local transformers backends ``hf`` and ``smollm2`` (the default model) come from the
``psymetrics-plugin-hf`` distribution; ``pluginsys.backend_hints`` says what to install for
each when no installed plugin registers it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from psymetrics_core.backends.lmeval_bridge import LMEvalBackend
from psymetrics_core.backends.openai_args import COMPLETIONS_ARGS, MODEL_ARGS
from psymetrics_core.backends.openai_chat import OpenAIChatBackend
from psymetrics_core.backends.openai_completions import OpenAICompletionsBackend
from psymetrics_core.pluginsys.backend_hints import DEFAULT_MODEL
from psymetrics_core.pluginsys.hookspecs import hookimpl

__all__ = ["register_backends", "DEFAULT_MODEL"]


def _openai_chat(model_args: dict[str, str]) -> Any:

    return OpenAIChatBackend(model_args)


def _openai_completions(model_args: dict[str, str]) -> Any:

    return OpenAICompletionsBackend(model_args)


def _lm_eval(model_args: dict[str, str]) -> Any:

    return LMEvalBackend(model_args)


@hookimpl(trylast=True)
def register_backends(register: Callable[..., None]) -> None:
    """Register the OpenAI-compatible and lm-eval backends."""
    register(
        "openai-chat",
        _openai_chat,
        "OpenAI-compatible /chat/completions: base_url=URL,model=NAME[,api_key_env=VAR]",
        args=MODEL_ARGS,
    )
    register(
        "openai-completions",
        _openai_completions,
        "OpenAI-compatible /completions (logprob mode needs echo): base_url=URL,model=NAME"
        "[,chat_template=PATH]",
        args=COMPLETIONS_ARGS,
    )
    register(
        "lm-eval",
        _lm_eval,
        "any lm-eval registry model as --model lm-eval:<name> (e.g. lm-eval:hf, lm-eval:vllm)",
        args=(("(lm-eval's own)", "the model_args of the lm-eval model, e.g. pretrained=PATH"),),
    )
