"""JSON-ready values: NaN as null, keys as strings (``--json`` output and written reports)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["json_ready"]


def json_ready(x: Any) -> Any:
    """``x`` with every float NaN replaced by None, dict keys as str and tuples as lists."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {str(k): json_ready(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_ready(v) for v in x]
    return x
