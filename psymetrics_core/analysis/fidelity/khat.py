"""Huang, Wu & Wang's (2025) effective human sample size k̂: how many human respondents the
model's answers are worth.

Answers are placed on 0..1 by their ordinal position ((x - min) / (max - min)). Per item the
human interval is the CLT interval of the mean with coverage gamma, m ± z_{(1+gamma)/2} s/√n;
the synthetic interval of the model's first k answers is m_k ± √C z_{1-alpha/2} s_k/√k, or the
whole range 0..1 when k <= k_min. G(k) is the share of items whose human interval is not inside
the synthetic one; k̂ is the largest k before G first exceeds alpha x gamma (0 when G(1) does),
as in the authors' code (``find_k_hat`` with their "general" coverage test). psym computes it
over all compared items (the authors choose k̂ on a training half of the questions and check it on
the other half).

With k_min = 2 the first two k cover by construction, and at k = 3 the interval from three
answers misses on enough items that k̂ is 2 even for a model that samples the human
distribution exactly: read k̂ against k_min.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from psymetrics_core.analysis.fidelity.records import NONSUB, Aligned, KHat, SideAnswers

__all__ = ["k_hat", "answer_values", "k_hat_of_values", "MAX_K"]

MAX_K = 5000  # the largest k examined


def answer_values(side: SideAnswers, al: Aligned) -> dict[str, np.ndarray]:
    """Each compared item's substantive answers on 0..1, in the order read."""
    f = side.frame[~side.frame["key"].isin(NONSUB) & side.frame["item"].isin(al.items)]
    by_item = {str(item): keys for item, keys in f.groupby("item", sort=False)["key"]}
    out: dict[str, np.ndarray] = {}
    for item, opts in zip(al.items, al.options, strict=True):
        lo, span = min(opts.positions), opts.span
        place = {v: (p - lo) / span for v, p in zip(opts.values, opts.positions, strict=True)}
        keys = by_item.get(item, pd.Series([], dtype=object))
        out[item] = keys.map(place).to_numpy(dtype=float) if span > 0 else np.array([])
    return out


def k_hat(
    model: SideAnswers,
    human: SideAnswers,
    al: Aligned,
    *,
    k_min: int = 2,
    alpha: float = 0.05,
    gamma: float = 0.5,
    c: float = 2.0,
) -> KHat:
    """k̂ of ``model`` against ``human`` (None with the reason when it cannot be computed)."""
    blank = KHat(None, k_min, alpha, gamma, c, 0, 0)
    for side, name in ((model, "model"), (human, "human")):
        if side.method not in ("sampled", "answers"):
            return _with(
                blank,
                f"k̂ needs individual answers; the {name} side gives distributions ({side.method})",
            )
    return k_hat_of_values(
        answer_values(model, al),
        answer_values(human, al),
        k_min=k_min,
        alpha=alpha,
        gamma=gamma,
        c=c,
    )


def _with(k: KHat, reason: str) -> KHat:
    return KHat(None, k.k_min, k.alpha, k.gamma, k.c, k.k_max, k.items, reason=reason)


def _real(values: np.ndarray, gamma: float) -> tuple[float, float]:
    m, s, n = values.mean(), values.std(ddof=1), values.size
    h = norm.ppf(0.5 + gamma / 2) * s / np.sqrt(n)
    return m - h, m + h


def _prefix(values: np.ndarray, k_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n_k, mean_k and sd_k of the first k answers, k = 1..k_max (k past the end: all)."""
    n = np.minimum(np.arange(1, k_max + 1), values.size)
    s1 = np.cumsum(values)[n - 1]
    s2 = np.cumsum(values**2)[n - 1]
    mean = s1 / n
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.maximum((s2 - n * mean**2) / (n - 1), 0.0)
    return n, mean, np.sqrt(var)


def k_hat_of_values(
    model: dict[str, np.ndarray],
    human: dict[str, np.ndarray],
    *,
    k_min: int = 2,
    alpha: float = 0.05,
    gamma: float = 0.5,
    c: float = 2.0,
) -> KHat:
    """k̂ from answers on 0..1 per item (see the module docstring)."""
    items = [it for it in model if model[it].size >= 1 and human.get(it, np.array([])).size >= 2]
    k_max = min(MAX_K, max((model[it].size for it in items), default=0))
    blank = KHat(None, k_min, alpha, gamma, c, k_max, len(items))
    if not items:
        return _with(blank, "no item has a model answer and two human answers")
    z = norm.ppf(1 - alpha / 2)
    missed = np.zeros(k_max)
    for it in items:
        lo, hi = _real(human[it], gamma)
        n, mean, sd = _prefix(model[it], k_max)
        half = np.sqrt(c) * z * sd / np.sqrt(n)
        full = (n <= k_min) | (n <= 1)
        s_lo, s_hi = np.where(full, 0.0, mean - half), np.where(full, 1.0, mean + half)
        missed += ~((lo >= s_lo) & (hi <= s_hi))
    g = missed / len(items)
    over = np.flatnonzero(g > alpha * gamma)
    value = k_max if over.size == 0 else int(over[0])  # k = index + 1; the k before it
    return KHat(value, k_min, alpha, gamma, c, k_max, len(items), tuple(float(x) for x in g))
