"""Point values and bootstrap replicates of the fidelity metrics for aligned mass arrays.

A replicate draws the clusters of each side with replacement (personas for a population run,
respondents for human answers; a distribution table is fixed) and recomputes every metric from
the drawn clusters' summed masses, so item, scale and overall figures of one replicate come from
the same draw. Intervals are the 2.5 and 97.5 percentiles of the replicates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from psymetrics_core.analysis.fidelity import metrics
from psymetrics_core.analysis.fidelity.records import Estimate

__all__ = ["ItemArrays", "item_arrays", "aggregate", "draw", "halves", "estimate", "Summary"]

_ITEM_METRICS = {"w1": metrics.w1, "tv": metrics.tv, "jsd": metrics.jsd, "ks": metrics.ks}


@dataclass
class ItemArrays:
    """Per-item metrics ``(..., items)`` and the SimBench normaliser terms."""

    w1: np.ndarray
    tv: np.ndarray
    jsd: np.ndarray
    ks: np.ndarray
    tvu: np.ndarray  # TV(human, uniform)


@dataclass
class Summary:
    """Means over a set of items ``(...,)``; SimBench with the data-set-level ``norm``."""

    items: np.ndarray  # items with a defined W1
    representativeness: np.ndarray
    w1: np.ndarray
    tv: np.ndarray
    simbench: np.ndarray
    jsd: np.ndarray
    ks: np.ndarray


def item_arrays(
    p: np.ndarray, q: np.ndarray, positions: np.ndarray, valid: np.ndarray
) -> ItemArrays:
    """The metrics of model masses ``p`` against human masses ``q`` (``(..., items, K + 3)``)."""
    k = positions.shape[-1]
    ps, qs = p[..., :k], q[..., :k]
    found = {name: fn(ps, qs, positions) for name, fn in _ITEM_METRICS.items()}
    return ItemArrays(**found, tvu=metrics.tv_uniform(qs, valid))


def _nanmean(x: np.ndarray) -> np.ndarray:
    n = (~np.isnan(x)).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.nansum(x, axis=-1) / np.maximum(n, 1), np.nan)


def norm(a: ItemArrays) -> np.ndarray:
    """SimBench's normaliser: mean TV(human, uniform) over the items whose TV is defined
    (NaN where it is 0: the humans answer uniformly everywhere)."""
    terms = np.where(np.isnan(a.tv), np.nan, a.tvu)
    out = _nanmean(terms)
    return np.where(out > 0, out, np.nan)


def aggregate(a: ItemArrays, idx: Sequence[int], simbench_norm: np.ndarray) -> Summary:
    """Means over the items ``idx``; SimBench = 100 (1 - mean TV / norm) (Hu et al., 2025)."""
    cols = list(idx)
    w1 = _nanmean(a.w1[..., cols])
    tv = _nanmean(a.tv[..., cols])
    with np.errstate(invalid="ignore", divide="ignore"):
        simbench = 100.0 * (1.0 - tv / simbench_norm)
    return Summary(
        items=(~np.isnan(a.w1[..., cols])).sum(axis=-1),
        representativeness=1.0 - w1,
        w1=w1,
        tv=tv,
        simbench=simbench,
        jsd=_nanmean(a.jsd[..., cols]),
        ks=_nanmean(a.ks[..., cols]),
    )


def draw(mass: np.ndarray, n_boot: int, rng: np.random.Generator, resampled: bool) -> np.ndarray:
    """``n_boot`` replicates ``(n_boot, items, K + 3)`` of the summed masses of ``mass``'s
    clusters drawn with replacement (a fixed side: its sum, repeated)."""
    total = mass.sum(axis=0)
    if not resampled or n_boot == 0:
        return np.broadcast_to(total, (n_boot, *total.shape)).copy()
    n = mass.shape[0]
    picks = rng.integers(0, n, size=(n_boot, n)) + n * np.arange(n_boot)[:, None]
    counts = np.bincount(picks.ravel(), minlength=n_boot * n).reshape(n_boot, n).astype(float)
    return (counts @ mass.reshape(n, -1)).reshape(n_boot, *total.shape)


def halves(
    mass: np.ndarray, splits: int, rng: np.random.Generator, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """``splits`` random splits of ``mass``'s clusters into ``size`` and the rest: the two
    parts' summed masses ``(splits, items, K + 3)`` each."""
    n = mass.shape[0]
    ranks = np.argsort(np.argsort(rng.random((splits, n)), axis=1), axis=1)
    first = (ranks < size).astype(float)
    flat = mass.reshape(n, -1)
    shape = (splits, *mass.shape[1:])
    return (first @ flat).reshape(shape), ((1.0 - first) @ flat).reshape(shape)


def estimate(point: float, reps: np.ndarray | None, reason: str) -> Estimate:
    """``point`` with the percentile interval of ``reps``; None with ``reason`` when NaN."""
    if point is None or not np.isfinite(point):
        return Estimate(None, reason=reason)
    if reps is None or reps.size == 0:
        return Estimate(float(point))
    ok = reps[np.isfinite(reps)]
    if ok.size < max(2, reps.size // 2):
        return Estimate(float(point), reason="interval: most bootstrap replicates undefined")
    low, high = np.percentile(ok, [2.5, 97.5])
    return Estimate(float(point), float(low), float(high))
