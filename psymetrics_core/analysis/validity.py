"""Convergent validity across models: declared hypotheses, Spearman's rho, Fisher-z CI.

Jung et al. (2025): rho over models of seed-averaged scores; 95% CI = tanh(atanh(r) +- 1.96 /
sqrt(n - 3)); strength labels of Schober et al. (2018).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..errors import PsymError

__all__ = ["Hypothesis", "parse_hypothesis", "spearman_fisher", "schober", "DEFAULT_HYPOTHESES"]


@dataclass(frozen=True)
class Hypothesis:
    """Score A and score B (``task.scale``) are expected to correlate with ``sign`` (+1/-1)."""

    a: str
    b: str
    sign: int
    source: str = ""


# Jung et al. (2025) (the paper's three convergent-validity hypotheses)
DEFAULT_HYPOTHESES = (
    Hypothesis("asi.total", "sr2k.total", +1, "Jung et al. (2025): sexism ~ racism"),
    Hypothesis("mfq.authority", "asi.benevolent", +1, "Jung et al. (2025): Authority ~ BS"),
    Hypothesis("mfq.fairness", "asi.hostile", -1, "Jung et al. (2025): Fairness ~ HS"),
)


def parse_hypothesis(text: str) -> Hypothesis:
    """``task.scale~task.scale:+`` (or ``:-``) -> Hypothesis; bad text is a PsymError."""
    body, _, sign = text.rpartition(":")
    a, _, b = body.partition("~")
    if sign not in ("+", "-") or not a.strip() or not b.strip():
        raise PsymError(
            f"--hypothesis {text!r}: expected TASK.SCALE~TASK.SCALE:+ or :- "
            "(e.g. mfq.authority~mfq.loyalty:+)"
        )
    return Hypothesis(a.strip(), b.strip(), 1 if sign == "+" else -1, "declared")


def schober(r: float) -> str:
    """Strength label of Schober et al. (2018) for |r|."""
    if not np.isfinite(r):
        return "undefined"
    a = abs(r)
    for cut, name in ((0.9, "very strong"), (0.7, "strong"), (0.4, "moderate"), (0.1, "weak")):
        if a >= cut:
            return name
    return "negligible"


def spearman_fisher(
    x: Sequence[float], y: Sequence[float], sign: int = 0, confidence: float = 0.95
) -> dict[str, Any]:
    """Spearman's rho (average ranks for ties), p-value (one-sided toward ``sign`` when
    given) and the Fisher-z CI tanh(atanh(r) +- z / sqrt(n - 3)) (NaN for n < 4)."""
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[ok], ya[ok]
    n = len(xa)
    out: dict[str, Any] = {"n": n, "rho": float("nan"), "p": float("nan"), "ci": [math.nan] * 2}
    if n < 2 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        out["note"] = "needs at least 2 units with varying scores"
        return out
    alt = "two-sided" if sign == 0 else ("greater" if sign > 0 else "less")
    res = stats.spearmanr(xa, ya, alternative=alt)
    r = float(res.statistic)
    out.update(rho=r, p=float(res.pvalue), alternative=alt, strength=schober(r))
    if n >= 4 and abs(r) < 1:
        zc = float(stats.norm.ppf(0.5 + confidence / 2))
        se = 1 / math.sqrt(n - 3)
        out["ci"] = [math.tanh(math.atanh(r) - zc * se), math.tanh(math.atanh(r) + zc * se)]
    if sign:
        out["supported"] = bool(np.sign(r) == sign)
    return out
