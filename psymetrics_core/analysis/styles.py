"""Response-style indices of one administration (one run of one condition).

All use the raw (not reverse-keyed) answer codes of the administered items:

- acquiescence: mean of (x - midpoint) / half-range over answered items, in [-1, 1]; 0 = no
  net agreement (higher codes mean more agreement: ``psym analyze`` mirrors the answers of
  a response scale whose spec says ``agree: low`` first; meaningful on balanced scales);
- agree_rate: share of answers above the midpoint;
- extreme: share of answers at the scale minimum or maximum;
- midpoint: share at the midpoint (NaN when the scale has no middle code);
- straightlining: longest run of identical consecutive answers / answered items, and
  modal_share, the share of the most frequent answer;
- refusal_rate and invalid_rate: refused and unparsed answers / administered items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["response_styles"]


def response_styles(
    answers: Sequence[float | None],
    lows: Sequence[float],
    highs: Sequence[float],
    statuses: Sequence[str | None],
) -> dict[str, Any]:
    """Indices for one administration, answers in presented order (None = not answered)."""
    n = len(answers)
    idx = [i for i, a in enumerate(answers) if a is not None]
    out: dict[str, Any] = {
        "n_items": n,
        "n_answered": len(idx),
        "refusal_rate": (sum(s == "refused" for s in statuses) / n) if n else float("nan"),
        "invalid_rate": (sum(s == "unparsed" for s in statuses) / n) if n else float("nan"),
    }
    if not idx:
        for k in ("acquiescence", "agree_rate", "extreme", "midpoint", "straightlining"):
            out[k] = float("nan")
        out["modal_share"] = float("nan")
        return out
    x = np.array([float(answers[i]) for i in idx])  # type: ignore[arg-type]
    lo = np.array([float(lows[i]) for i in idx])
    hi = np.array([float(highs[i]) for i in idx])
    mid = (lo + hi) / 2
    half = (hi - lo) / 2
    out["acquiescence"] = float(np.mean((x - mid) / half))
    out["agree_rate"] = float(np.mean(x > mid))
    out["extreme"] = float(np.mean((x == lo) | (x == hi)))
    has_mid = (hi - lo) % 2 == 0
    out["midpoint"] = float(np.mean(x[has_mid] == mid[has_mid])) if has_mid.any() else float("nan")
    longest = run = 1
    for a, b in zip(x[:-1], x[1:], strict=True):
        run = run + 1 if a == b else 1
        longest = max(longest, run)
    out["straightlining"] = longest / len(x)
    _, counts = np.unique(x, return_counts=True)
    out["modal_share"] = float(counts.max() / len(x))
    return out
