"""Percentile bootstrap over items (seeded), shared by every probe metric and the index."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["resamples", "percentile_interval", "quantile"]

T = TypeVar("T")


def resamples(n: int, reps: int, seed: int) -> list[list[int]]:
    """``reps`` lists of ``n`` indices drawn with replacement from ``range(n)`` (seeded)."""
    rng = random.Random(seed)
    return [[rng.randrange(n) for _ in range(n)] for _ in range(reps)] if n else []


def quantile(sorted_vals: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default method)."""
    pos = (len(sorted_vals) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def percentile_interval(
    units: Sequence[T],
    statistic: Callable[[list[T]], float | None],
    draws: Sequence[Sequence[int]],
    level: float = 0.95,
) -> tuple[float | None, float | None, str | None]:
    """(low, high, reason) of the percentile bootstrap interval of ``statistic`` over ``units``.

    ``draws`` are index lists from :func:`resamples` (shared across metrics so the index can be
    bootstrapped jointly). Replicates where the statistic is undefined are skipped; with fewer
    than 2 units or no defined replicate the interval is (None, None, reason).
    """
    if len(units) < 2:
        return None, None, "fewer than 2 items: no bootstrap interval"
    vals = sorted(v for d in draws if (v := statistic([units[i] for i in d])) is not None)
    if not vals:
        return None, None, "the statistic is undefined in every bootstrap replicate"
    alpha = (1 - level) / 2
    return quantile(vals, alpha), quantile(vals, 1 - alpha), None
