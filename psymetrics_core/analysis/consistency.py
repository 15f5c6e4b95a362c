"""Answer consistency between administration conditions (Jung et al., 2026) and Tukey fences.

Cons = (1/|I|) * sum_i match(a_orig_i, a_v_i). NaN policy (Jung et al. (2026) [C] ``check_match``):
``match`` (default) counts two missing answers as a match and one missing as a mismatch;
``mismatch`` counts any missing answer as a mismatch; ``omit`` drops items where either is
missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from psymetrics_core.base.errors import PsymError

__all__ = ["NAN_POLICIES", "match_vector", "answer_consistency", "tukey_fences"]

NAN_POLICIES = ("match", "mismatch", "omit")


def match_vector(
    a: Sequence[float | None], b: Sequence[float | None], nan_policy: str = "match"
) -> np.ndarray:
    """Per item: 1.0 if the answers match, 0.0 if not, NaN if the item is omitted."""
    if nan_policy not in NAN_POLICIES:
        raise PsymError(f"--nan-policy must be one of {', '.join(NAN_POLICIES)}")
    x = np.array([np.nan if v is None else float(v) for v in a])
    y = np.array([np.nan if v is None else float(v) for v in b])
    if x.shape != y.shape:
        raise PsymError("answer vectors differ in length")
    nx, ny = np.isnan(x), np.isnan(y)
    out = (x == y).astype(float)
    if nan_policy == "match":
        out[nx & ny] = 1.0
    elif nan_policy == "omit":
        out[nx | ny] = np.nan
    return out


def answer_consistency(
    a: Sequence[float | None], b: Sequence[float | None], nan_policy: str = "match"
) -> float:
    """Fraction of items answered the same way under two conditions (NaN if none compared)."""
    m = match_vector(a, b, nan_policy)
    return float(np.nanmean(m)) if np.any(~np.isnan(m)) else float("nan")


def tukey_fences(values: Sequence[float], k: float = 1.5) -> dict[str, Any]:
    """Q1, Q3, IQR and the fences Q1 - k*IQR, Q3 + k*IQR (numpy's linear quantiles)."""
    v = np.asarray([x for x in values if x is not None and not np.isnan(x)], dtype=float)
    if v.size == 0:
        raise PsymError("the human baseline has no consistency values")
    q1, q3 = np.quantile(v, [0.25, 0.75])
    iqr = q3 - q1
    return {
        "q1": float(q1),
        "q3": float(q3),
        "iqr": float(iqr),
        "lower": float(q1 - k * iqr),
        "upper": float(q3 + k * iqr),
        "k": k,
        "n": int(v.size),
        "quantile_method": "numpy linear",
    }
