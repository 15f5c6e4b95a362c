"""The statistics of the divergence between methods: Spearman's rho between two construct
profiles with a permutation p and a bootstrap interval, NDCG, and the sign-flip test of
within- against cross-method agreement across models (Song et al., 2025).

Every function takes plain sequences and returns a typed record; a number that is undefined
(a constant profile, too few constructs or models) is None with its reason.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "EXACT_MAX",
    "DRAWS",
    "SEED",
    "Rho",
    "SignFlip",
    "average_ranks",
    "spearman_rho",
    "rank_agreement",
    "ndcg",
    "sign_flip",
]

EXACT_MAX = 8  # permutation p exact over all n! orders up to 8 constructs (40,320 orders)
DRAWS = 10_000  # seeded draws above that, and bootstrap resamples
SEED = 20250912  # the fixed seed of the draws: the same runs give the same p and interval
LEVEL = 0.95
NDCG_TIES = (
    "relevance n, n-1, ..., 1 by the first profile's order (highest first); ties in either "
    "profile are broken by construct name (alphabetical)"
)


def average_ranks(x: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (scipy.stats.rankdata's 'average')."""
    a = np.asarray(x, dtype=float)
    order = np.argsort(a, kind="mergesort")
    ranks = np.empty(len(a), dtype=float)
    i = 0
    while i < len(a):
        j = i
        while j + 1 < len(a) and a[order[j + 1]] == a[order[i]]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _pearson(rx: np.ndarray, ry: np.ndarray) -> float | None:
    dx, dy = rx - rx.mean(), ry - ry.mean()
    den = math.sqrt(float(dx @ dx) * float(dy @ dy))
    return None if den == 0 else float(dx @ dy) / den


def spearman_rho(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> tuple[float | None, str | None]:
    """Spearman's rho (Pearson's r of the average ranks) and None's reason."""
    if len(x) != len(y):
        raise ValueError("profiles of different lengths")
    if len(x) < 3:
        return None, f"{len(x)} shared construct(s): rho needs 3 or more"
    rx, ry = average_ranks(x), average_ranks(y)
    for name, r in (("first", rx), ("second", ry)):
        if np.all(r == r[0]):
            return None, f"the {name} profile is constant: it has no ranking"
    return _pearson(rx, ry), None


@dataclass(frozen=True)
class Rho:
    """Spearman's rho of two profiles with its two-sided permutation p (``p_method``: exact or
    the number of seeded draws) and a percentile bootstrap interval over constructs."""

    n: int
    rho: float | None
    reason: str | None
    p: float | None
    p_method: str | None
    ci_low: float | None
    ci_high: float | None
    ci_draws: int
    ci_reason: str | None


def _permutation_p(rx: np.ndarray, ry: np.ndarray, observed: float) -> tuple[float, str]:
    """Share of orders of ``ry`` whose |rho| is at least the observed |rho| (two-sided)."""
    n = len(rx)
    tol = 1e-12
    if n <= EXACT_MAX:
        perms = np.array(list(itertools.permutations(range(n))))
        method = f"exact ({len(perms)} orders)"
    else:
        rng = np.random.default_rng(SEED)
        perms = np.array([rng.permutation(n) for _ in range(DRAWS)])
        method = f"{DRAWS} seeded draws"
    dx = rx - rx.mean()
    dy = ry[perms] - ry.mean()
    den = math.sqrt(float(dx @ dx) * float(dy[0] @ dy[0]))
    rhos = (dy @ dx) / den
    return float(np.mean(np.abs(rhos) >= abs(observed) - tol)), method


def _row_ranks(a: np.ndarray) -> np.ndarray:
    """Average ranks within each row: 1 + #smaller + (#equal - 1) / 2."""
    smaller = (a[:, None, :] < a[:, :, None]).sum(axis=2)
    equal = (a[:, None, :] == a[:, :, None]).sum(axis=2)
    return smaller + (equal + 1) / 2


def _bootstrap(x: np.ndarray, y: np.ndarray) -> tuple[float | None, float | None, int, str | None]:
    """Percentile interval of rho over constructs resampled with replacement (seeded); a
    resample with a constant side has no rho and is left out (counted)."""
    rng = np.random.default_rng(SEED)
    n = len(x)
    idx = rng.integers(0, n, (DRAWS, n))
    rx, ry = _row_ranks(x[idx]), _row_ranks(y[idx])
    dx = rx - rx.mean(axis=1, keepdims=True)
    dy = ry - ry.mean(axis=1, keepdims=True)
    den = np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    ok = den > 0
    values = (dx * dy).sum(axis=1)[ok] / den[ok]
    if len(values) < DRAWS // 2:
        return (
            None,
            None,
            len(values),
            (f"only {len(values)} of {DRAWS} resamples have a rho (too few constructs)"),
        )
    lo, hi = np.quantile(values, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(lo), float(hi), len(values), None


def rank_agreement(x: Sequence[float], y: Sequence[float]) -> Rho:
    """Spearman's rho of ``x`` and ``y`` (same constructs, same order) with its permutation p
    (exact up to ``EXACT_MAX`` constructs, else ``DRAWS`` seeded draws) and bootstrap interval."""
    rho, why = spearman_rho(x, y)
    n = len(x)
    if rho is None:
        return Rho(n, None, why, None, None, None, None, 0, why)
    ax, ay = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    p, method = _permutation_p(average_ranks(ax), average_ranks(ay), rho)
    lo, hi, draws, ci_why = _bootstrap(ax, ay)
    return Rho(n, rho, None, p, method, lo, hi, draws, ci_why)


def ndcg(
    names: Sequence[str], reference: Sequence[float], other: Sequence[float], k: int | None = None
) -> float | None:
    """NDCG of ``other``'s ranking against ``reference``'s (the ideal), relevance n, n-1, ...,
    1 by the reference's order, cut at ``k``; ties broken by construct name (``NDCG_TIES``)."""
    n = len(names)
    if n == 0:
        return None
    by_ref = sorted(range(n), key=lambda i: (-reference[i], names[i]))
    relevance = {i: float(n - pos) for pos, i in enumerate(by_ref)}
    by_other = sorted(range(n), key=lambda i: (-other[i], names[i]))
    cut = n if k is None else min(k, n)

    def dcg(order: list[int]) -> float:
        return sum(relevance[i] / math.log2(pos + 2) for pos, i in enumerate(order[:cut]))

    return dcg(by_other) / dcg(by_ref)


@dataclass(frozen=True)
class SignFlip:
    """Paired test of d = within - cross agreement over models: the mean d, its p (share of
    sign assignments with a mean at least as large: one-sided; |mean|: two-sided) and a
    bootstrap interval of the mean."""

    n: int
    mean: float | None
    p_one_sided: float | None
    p_two_sided: float | None
    method: str | None
    ci_low: float | None
    ci_high: float | None
    reason: str | None


def sign_flip(d: Sequence[float]) -> SignFlip:
    """The sign-flip permutation test of the mean of ``d`` (exact over 2^n assignments up to
    16 models, else ``DRAWS`` seeded draws) and a seeded percentile bootstrap of the mean."""
    n = len(d)
    if n < 2:
        return SignFlip(n, None, None, None, None, None, None, f"{n} model(s): needs 2 or more")
    a = np.asarray(d, dtype=float)
    mean = float(a.mean())
    rng = np.random.default_rng(SEED)
    if n <= 16:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        method = f"exact ({len(signs)} sign assignments)"
    else:
        signs = rng.choice((1.0, -1.0), size=(DRAWS, n))
        method = f"{DRAWS} seeded draws"
    means = (signs * a).mean(axis=1)
    tol = 1e-12
    one = float(np.mean(means >= mean - tol))
    two = float(np.mean(np.abs(means) >= abs(mean) - tol))
    boot = a[rng.integers(0, n, (DRAWS, n))].mean(axis=1)
    lo, hi = np.quantile(boot, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return SignFlip(n, mean, one, two, method, float(lo), float(hi), None)
