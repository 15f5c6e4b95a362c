"""Rao et al.'s (2023) assessment metrics (Eq. 2-5): consistency, robustness and fairness.

Score vectors X (one per testing, k dimensions on a 0-100 scale), alpha = 100:

- consistency s_c = alpha / (alpha + mean_i ||X_i - X_bar||_2)  (over N testings);
- robustness  s_r = alpha / (alpha + ||X_bar' - X_bar||_2)  (X_bar' fixed-order options,
  X_bar permuted/shuffled options);
- fairness    s_f = alpha * s_c^M * s_c^F / (alpha + ||X_bar^M - X_bar^F||_2).

For instruments that are not on 0-100, scores are first rescaled to 0-100 (POMP: percent of
maximum possible) so alpha = 100 keeps the paper's meaning.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["ALPHA", "consistency", "robustness", "fairness", "fairness_from_means", "pomp"]

ALPHA = 100.0


def _arr(x: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    return a.reshape(1, -1) if a.ndim == 1 else a


def consistency(runs: Sequence[Sequence[float]] | np.ndarray, alpha: float = ALPHA) -> float:
    """s_c over testings (rows) of score vectors (columns)."""
    x = _arr(runs)
    mean = x.mean(axis=0)
    dist = np.linalg.norm(x - mean, axis=1).mean()
    return float(alpha / (alpha + dist))


def robustness(
    fixed: Sequence[Sequence[float]] | np.ndarray,
    permuted: Sequence[Sequence[float]] | np.ndarray,
    alpha: float = ALPHA,
) -> float:
    """s_r between the mean of fixed-order testings and the mean of permuted ones."""
    d = np.linalg.norm(_arr(fixed).mean(axis=0) - _arr(permuted).mean(axis=0))
    return float(alpha / (alpha + d))


def fairness_from_means(
    mean_m: Sequence[float], mean_f: Sequence[float], sc_m: float, sc_f: float, alpha: float = ALPHA
) -> float:
    """s_f from the two subjects' mean vectors and consistency scores."""
    d = np.linalg.norm(np.asarray(mean_m, float) - np.asarray(mean_f, float))
    return float(alpha * sc_m * sc_f / (alpha + d))


def fairness(
    runs_m: Sequence[Sequence[float]] | np.ndarray,
    runs_f: Sequence[Sequence[float]] | np.ndarray,
    alpha: float = ALPHA,
) -> float:
    """s_f between two subjects' testings (e.g. Men vs Women)."""
    m, f = _arr(runs_m), _arr(runs_f)
    return fairness_from_means(
        m.mean(axis=0), f.mean(axis=0), consistency(m, alpha), consistency(f, alpha), alpha
    )


def pomp(score: float, low: float, high: float) -> float:
    """Percent of maximum possible: 100 * (score - low) / (high - low)."""
    return 100.0 * (score - low) / (high - low)
