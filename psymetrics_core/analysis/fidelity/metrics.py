"""The distance metrics of ``psym fidelity``, vectorised over replicates and items.

Inputs are substantive masses ``(..., items, K)`` of the two sides over each item's options
sorted by ordinal position (``positions (items, K)``, padded slots repeat the last position and
carry no mass). Each side is renormalised over its options first (refusals, "don't know" and
unparsed answers removed, as OpinionQA does); an item with no substantive mass on a side gives
NaN (undefined), and so does an item with fewer than two distinct positions.

- W1 (Santurkar et al., 2023, OpinionQA): the 1-Wasserstein distance over the ordinal positions,
  sum over adjacent positions of |CDF_model - CDF_human| x gap, divided by max - min of the
  positions (their ``get_max_wd``), so 1 = all mass at opposite ends.
- TV: 0.5 x sum |p - q| (Hu et al., 2025, SimBench, per item).
- JSD: Jensen-Shannon divergence in bits, 0.5 KL(p||m) + 0.5 KL(q||m), m = (p + q) / 2.
- KS: max |CDF_model - CDF_human| over the ordinal positions.
- TV to uniform: TV(human, uniform over the item's listed options), SimBench's normaliser.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import jensenshannon

__all__ = ["renormalise", "w1", "tv", "jsd", "ks", "tv_uniform", "shares_nonsub"]


def renormalise(mass: np.ndarray) -> np.ndarray:
    """``mass`` divided by its sum over the last axis; NaN where the sum is 0."""
    total = mass.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = mass / total
    return np.where(total > 0, out, np.nan)


def _cdf_gap(p: np.ndarray, q: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    diff = np.cumsum(p, axis=-1) - np.cumsum(q, axis=-1)
    gaps = np.diff(positions, axis=-1)
    return diff[..., :-1], gaps


def _span(positions: np.ndarray) -> np.ndarray:
    span = positions.max(axis=-1) - positions.min(axis=-1)
    return np.where(span > 0, span, np.nan)


def w1(p: np.ndarray, q: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """OpinionQA's W1 over the ordinal positions divided by their range (NaN: undefined)."""
    p, q = renormalise(p), renormalise(q)
    diff, gaps = _cdf_gap(p, q, positions)
    return np.abs(diff * gaps).sum(axis=-1) / _span(positions) + _undefined(p, q, positions)


def _undefined(p: np.ndarray, q: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """0 where the item's metrics are defined, NaN where not (a side without substantive
    answers, or one distinct position)."""
    bad = np.isnan(p[..., 0]) | np.isnan(q[..., 0]) | np.isnan(_span(positions))
    return np.where(bad, np.nan, 0.0)


def tv(p: np.ndarray, q: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Total variation of the renormalised vectors."""
    p, q = renormalise(p), renormalise(q)
    return 0.5 * np.abs(p - q).sum(axis=-1) + _undefined(p, q, positions)


def jsd(p: np.ndarray, q: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Jensen-Shannon divergence in bits (0 = same, 1 = disjoint supports): the square of
    scipy's Jensen-Shannon distance."""
    p, q = renormalise(p), renormalise(q)
    with np.errstate(invalid="ignore", divide="ignore"):
        distance = jensenshannon(p, q, base=2, axis=-1)
    return np.asarray(distance) ** 2 + _undefined(p, q, positions)


def ks(p: np.ndarray, q: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The Kolmogorov-Smirnov distance on the ordinal scale: max |CDF_p - CDF_q|."""
    p, q = renormalise(p), renormalise(q)
    diff = np.cumsum(p, axis=-1) - np.cumsum(q, axis=-1)
    return np.abs(diff).max(axis=-1) + _undefined(p, q, positions)


def tv_uniform(q: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """TV(human, uniform over the listed options) per item (SimBench's normaliser terms);
    NaN for an item with one option or no substantive human answers."""
    q = renormalise(q)
    k = valid.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.where(valid, 1.0 / k[..., None], 0.0)
    out = 0.5 * np.abs(q - u).sum(axis=-1)
    return np.where((k >= 2) & ~np.isnan(q[..., 0]), out, np.nan)


def shares_nonsub(mass: np.ndarray, k: int) -> np.ndarray:
    """The non-substantive shares ``(..., items, 3)`` of all answers (NaN: no answers)."""
    total = mass.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = mass[..., k:] / total
    return np.where(total > 0, out, np.nan)
