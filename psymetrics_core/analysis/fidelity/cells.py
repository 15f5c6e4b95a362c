"""Cells of the fidelity CSV inputs: response keys and bounded numbers."""

from __future__ import annotations

import math
from functools import lru_cache

from psymetrics_core.base.errors import PsymError

__all__ = ["option_key", "number"]

_NONSUB_WORDS = {
    "refused": "refused",
    "dont_know": "dont_know",
    "don't know": "dont_know",
    "dont know": "dont_know",
    "unparsed": "unparsed",
    "": "unparsed",
}


@lru_cache(maxsize=4096)
def option_key(text: str) -> str:
    """The canonical key of a response: a non-substantive word, or the value as written, a
    number in its shortest form (``3.0`` -> ``3``)."""
    t = text.strip()
    low = t.lower()
    if low in _NONSUB_WORDS:
        return _NONSUB_WORDS[low]
    try:
        x = float(t)
    except ValueError:
        return t
    if math.isfinite(x) and x == int(x):
        return str(int(x))
    return repr(x) if math.isfinite(x) else t


def number(text: str, where: str, field: str, *, minimum: float | None = None) -> float:
    """A finite number (``>= minimum``) from a cell, or one error line naming it."""
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    if not math.isfinite(x) or (minimum is not None and x < minimum):
        need = f"a finite number >= {minimum:g}" if minimum is not None else "a finite number"
        raise PsymError(f"{where}: field '{field}': expected {need}, got {text.strip()!r}")
    return x
