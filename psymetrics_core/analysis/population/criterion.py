"""Criterion validity against persona labels: Spearman's rho or AUC, each with a 95% CI.

rho's interval is Fisher's z with Bonett & Wright's (2000) standard error for Spearman's
rho, sqrt((1 + rho^2 / 2) / (n - 3)). AUC = P(score of a positive > score of a negative)
+ 1/2 P(tie) (the Mann-Whitney statistic); its interval is DeLong et al.'s (1988) variance
on the logit scale, so it stays inside (0, 1). Undefined values are None with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm, spearmanr

__all__ = ["Criterion", "spearman", "auc"]


@dataclass(frozen=True)
class Criterion:
    """One criterion statistic (``rho`` or ``auc``) with its 95% interval."""

    statistic: str
    value: float | None
    ci95: tuple[float, float] | None
    n: int
    reason: str | None = None


def _pairs(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    return x[ok], y[ok]


def spearman(scores: np.ndarray, labels: np.ndarray) -> Criterion:
    """Spearman's rho of scale scores with a continuous (or ordinal) label."""
    x, y = _pairs(scores, labels)
    n = len(x)
    if n < 4:
        return Criterion("rho", None, None, n, f"{n} complete pairs (needs 4+)")
    for what, v in (("scores", x), ("labels", y)):
        if np.unique(v).size < 2:
            return Criterion("rho", None, None, n, f"the {what} never vary")
    rho = float(spearmanr(x, y).statistic)
    if abs(rho) >= 1.0:
        return Criterion("rho", rho, None, n, "|rho| = 1: no interval")
    se = np.sqrt((1.0 + rho**2 / 2.0) / (n - 3))
    z, q = np.arctanh(rho), float(norm.ppf(0.975))
    return Criterion("rho", rho, (float(np.tanh(z - q * se)), float(np.tanh(z + q * se))), n)


def _psi(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Mann-Whitney kernel: 1 if pos > neg, 1/2 if tied, 0 else (positives x negatives)."""
    d = pos[:, None] - neg[None, :]
    return (d > 0).astype(float) + 0.5 * (d == 0)


def auc(scores: np.ndarray, labels: np.ndarray) -> Criterion:
    """AUC of scale scores for a binary label (1/True = positive) with DeLong's interval."""
    x, y = _pairs(scores, labels)
    n = len(x)
    kinds = np.unique(y)
    if not set(kinds.tolist()) <= {0.0, 1.0} or kinds.size < 2:
        return Criterion("auc", None, None, n, f"labels must be 0/1 with both present: {kinds[:5]}")
    pos, neg = x[y == 1], x[y == 0]
    if len(pos) < 2 or len(neg) < 2:
        return Criterion("auc", None, None, n, f"{len(pos)} positives, {len(neg)} negatives")
    k = _psi(pos, neg)
    a = float(k.mean())
    v10, v01 = k.mean(axis=1), k.mean(axis=0)
    var = float(np.var(v10, ddof=1) / len(pos) + np.var(v01, ddof=1) / len(neg))
    if a in (0.0, 1.0):
        return Criterion("auc", a, None, n, "perfect separation: no interval")
    if var <= 0:
        return Criterion("auc", a, None, n, "the scores do not vary within the groups: no interval")
    logit, se = np.log(a / (1 - a)), np.sqrt(var) / (a * (1 - a))
    q = float(norm.ppf(0.975))
    lo, hi = 1 / (1 + np.exp(-(logit - q * se))), 1 / (1 + np.exp(-(logit + q * se)))
    return Criterion("auc", a, (float(lo), float(hi)), n)
