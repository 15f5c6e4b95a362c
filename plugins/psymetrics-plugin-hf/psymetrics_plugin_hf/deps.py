"""The hf plugin's dependencies: present (importable, with their package metadata) or one line
naming the command that installs them (``psymetrics_core.pluginsys.backend_hints``)."""

from __future__ import annotations

from importlib import metadata
from importlib.util import find_spec

from psymetrics_core.api import HF_DIST, BackendError, backend_install

__all__ = ["require_modules", "version_of"]

# the distributions whose package metadata the backend reads (``identity``): importable without
# it (a copied or half-removed install) is not installed
_DISTRIBUTIONS = {"torch": "torch", "transformers": "transformers", "gguf": "gguf"}


def _installed(module: str) -> bool:
    """Whether ``module`` is importable and, for a known dependency, has its package metadata
    (checked without importing it)."""
    try:
        if find_spec(module) is None:
            return False
    except (ImportError, ValueError):  # a broken parent package or a half-imported module
        return False
    if module not in _DISTRIBUTIONS:
        return True
    try:
        metadata.version(_DISTRIBUTIONS[module])
    except metadata.PackageNotFoundError:
        return False
    return True


def require_modules(*modules: str, model: str = "hf") -> None:
    """A one-line :class:`BackendError` naming what to install when one of ``modules`` (all
    dependencies of ``psymetrics-plugin-hf``) is missing: the command that makes ``--model
    model`` work (``backend_hints``); checked without importing them."""
    missing = [m for m in modules if not _installed(m)]
    if missing:
        raise BackendError(
            f"--model {model} needs {', '.join(missing)} (dependencies of {HF_DIST}), which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {backend_install(model)}"
        )


def version_of(name: str, model: str) -> str:
    """The installed version of the distribution ``name``, for the run record; a missing one
    is the one line saying what to install."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        raise BackendError(
            f"--model {model} needs {name}, which is not installed (no package metadata): "
            f"{backend_install(model)}"
        ) from None
