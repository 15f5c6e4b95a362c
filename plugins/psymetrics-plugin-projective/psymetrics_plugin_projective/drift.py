"""Stability, drift and criterion-validity statistics for paired categorical predictions.

Used by the projective tests (Wang et al., 2026, "GenPT", §5.3-5.4) and by questionnaire
baselines alike: one prediction per (target, dimension) under a neutral and a perturbed
condition, or against ground truth.

- ``linear_kappa``: pooled linearly-weighted Cohen's κ (Eq. 12) over an explicit label set;
  the same number as ``sklearn.metrics.cohen_kappa_score(a, b, weights="linear",
  labels=labels)`` for consecutive integer labels.
- ``directional_consistency``: DCR = max(n_up, n_down) / (n_up + n_down) with its direction
  (Eq. 13); undefined when nothing changed.
- ``mean_shift``: the mean per-target shift μΔ, its absolute value and percentile bootstrap
  intervals (the paper reports |μΔ| without an interval).
- ``exact_accuracy``, ``mbti_hamming``, ``majority_baseline``, ``judge_agreement``.

Every statistic that cannot be computed is ``None`` with a ``reason``, never 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Stat",
    "DCR",
    "Shift",
    "linear_kappa",
    "directional_consistency",
    "mean_shift",
    "exact_accuracy",
    "mbti_hamming",
    "majority_baseline",
    "judge_agreement",
    "paired",
]

Level = int | None


@dataclass(frozen=True)
class Stat:
    """A statistic with its sample size; ``value`` is None when undefined (``reason`` says why)."""

    value: float | None
    n: int
    reason: str | None = None


@dataclass(frozen=True)
class DCR:
    """Directional consistency ratio with its direction (``"up"``, ``"down"`` or ``"="``)."""

    value: float | None
    direction: str | None
    n_up: int
    n_down: int
    n_unchanged: int
    reason: str | None = None

    @property
    def arrow(self) -> str:
        """The paper's notation: ↑, ↓ or = ("" when undefined)."""
        return {"up": "↑", "down": "↓", "=": "="}.get(self.direction or "", "")


@dataclass(frozen=True)
class Shift:
    """Mean per-target shift μΔ (perturbed − neutral), |μΔ| and bootstrap intervals."""

    mean: float | None
    abs_mean: float | None
    ci_low: float | None
    ci_high: float | None
    abs_ci_low: float | None
    abs_ci_high: float | None
    n: int
    n_boot: int
    reason: str | None = None


def paired(a: Sequence[Level], b: Sequence[Level]) -> tuple[list[int], list[int], int]:
    """Pairs where both predictions exist, plus the number of pairs dropped for a missing one."""
    if len(a) != len(b):
        raise ValueError(f"paired predictions differ in length ({len(a)} vs {len(b)})")
    xs, ys, dropped = [], [], 0
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            dropped += 1
        else:
            xs.append(int(x))
            ys.append(int(y))
    return xs, ys, dropped


def linear_kappa(a: Sequence[Level], b: Sequence[Level], labels: Sequence[int]) -> Stat:
    """Pooled linearly-weighted Cohen's κ of two raters over ``labels`` (ordered categories).

    κ = 1 − Σ d_ij O_ij / Σ d_ij E_ij with d_ij = |i − j| / (K − 1) on the positions of the
    labels, O the observed joint proportions and E the product of the marginals. Pairs with a
    missing prediction are left out. Undefined with no pairs, fewer than two labels, a value
    outside ``labels``, or when chance disagreement is zero (both raters always give the same
    single category).
    """
    xs, ys, dropped = paired(a, b)
    labels = list(labels)
    k = len(labels)
    if not xs:
        return Stat(None, 0, "no pair with both predictions" + _dropped(dropped))
    if k < 2:
        return Stat(None, len(xs), "fewer than two categories")
    index = {v: i for i, v in enumerate(labels)}
    outside = sorted({v for v in xs + ys if v not in index})
    if outside:
        return Stat(None, len(xs), f"value(s) {outside} outside the labels {labels}")
    obs = np.zeros((k, k))
    for x, y in zip(xs, ys, strict=True):
        obs[index[x], index[y]] += 1
    obs /= obs.sum()
    exp = np.outer(obs.sum(axis=1), obs.sum(axis=0))
    pos = np.arange(k)
    dist = np.abs(pos[:, None] - pos[None, :]) / (k - 1)
    expected_disagreement = float((dist * exp).sum())
    if expected_disagreement <= 1e-12:
        return Stat(
            None,
            len(xs),
            "undefined: chance disagreement is zero (both raters used a single category)",
        )
    value = 1.0 - float((dist * obs).sum()) / expected_disagreement
    return Stat(value, len(xs), _dropped(dropped).strip("; ") or None)


def directional_consistency(baseline: Sequence[Level], perturbed: Sequence[Level]) -> DCR:
    """DCR = max(n_up, n_down) / (n_up + n_down) over the pairs that changed, with direction.

    ``"up"`` means the perturbed prediction is higher than the neutral one; a tie is ``"="``
    (DCR 0.5). Undefined (None with a reason) when no prediction changed.
    """
    xs, ys, dropped = paired(baseline, perturbed)
    up = sum(y > x for x, y in zip(xs, ys, strict=True))
    down = sum(y < x for x, y in zip(xs, ys, strict=True))
    same = len(xs) - up - down
    if up + down == 0:
        why = "no pair with both predictions" if not xs else "undefined: no prediction changed"
        return DCR(None, None, 0, 0, same, why + _dropped(dropped))
    direction = "up" if up > down else "down" if down > up else "="
    return DCR(max(up, down) / (up + down), direction, up, down, same)


def mean_shift(
    baseline: Sequence[Level],
    perturbed: Sequence[Level],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Shift:
    """μΔ = mean(perturbed − baseline) over targets, |μΔ|, and percentile bootstrap intervals.

    The bootstrap resamples targets (pairs) with replacement ``n_boot`` times
    (``numpy.random.default_rng(seed)``); the |μΔ| interval is the percentile interval of the
    absolute resampled means. Intervals are None with fewer than two pairs.
    """
    xs, ys, dropped = paired(baseline, perturbed)
    if not xs:
        return Shift(None, None, None, None, None, None, 0, 0, "no pair" + _dropped(dropped))
    d = np.array(ys, dtype=float) - np.array(xs, dtype=float)
    mean = float(d.mean())
    if len(d) < 2:
        return Shift(mean, abs(mean), None, None, None, None, 1, 0, "one pair: no interval")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), size=(n_boot, len(d)))
    means = d[idx].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    alo, ahi = np.percentile(np.abs(means), [tail, 100 - tail])
    return Shift(
        mean,
        abs(mean),
        float(lo),
        float(hi),
        float(alo),
        float(ahi),
        len(d),
        n_boot,
        _dropped(dropped).strip("; ") or None,
    )


def exact_accuracy(predicted: Sequence[Level], truth: Sequence[Level]) -> Stat:
    """Share of predictions equal to the ground truth; a missing prediction counts as wrong.

    (The paper does not say how failed parses count; counting them wrong keeps N fixed.)
    """
    if len(predicted) != len(truth):
        raise ValueError("predictions and ground truth differ in length")
    pairs = [(p, t) for p, t in zip(predicted, truth, strict=True) if t is not None]
    if not pairs:
        return Stat(None, 0, "no ground truth")
    hits = sum(p is not None and int(p) == int(t) for p, t in pairs)
    return Stat(hits / len(pairs), len(pairs))


def mbti_hamming(predicted: Sequence[str | None], truth: Sequence[str | None]) -> Stat:
    """Mean number of the four MBTI letters that differ from the ground truth (0-4).

    A missing prediction counts 4 (every axis wrong) so that failed parses cannot look good;
    targets without a ground-truth type are left out.
    """
    if len(predicted) != len(truth):
        raise ValueError("predictions and ground truth differ in length")
    dists = []
    for p, t in zip(predicted, truth, strict=True):
        if not t:
            continue
        if not p or len(p) != 4:
            dists.append(4)
        else:
            dists.append(sum(a != b for a, b in zip(p.upper(), t.upper(), strict=True)))
    if not dists:
        return Stat(None, 0, "no ground truth")
    return Stat(sum(dists) / len(dists), len(dists))


def majority_baseline(truth_by_dimension: dict[str, Sequence[Hashable]]) -> dict[str, Stat]:
    """Accuracy of predicting each dimension's most common true value for every target.

    An in-sample oracle (the mode is taken from the same labels it is scored on), so it is an
    upper bound for any constant guess; the paper reports no such baseline.
    """
    out: dict[str, Stat] = {}
    for dim, values in truth_by_dimension.items():
        known = [v for v in values if v is not None]
        if not known:
            out[dim] = Stat(None, 0, "no ground truth")
            continue
        _, count = Counter(known).most_common(1)[0]
        out[dim] = Stat(count / len(known), len(known))
    return out


def judge_agreement(
    a: Sequence[Level], b: Sequence[Level], labels: Sequence[int]
) -> dict[str, Stat]:
    """Agreement of two judges on the same targets: exact agreement share and linear κ."""
    xs, ys, dropped = paired(a, b)
    share = (
        Stat(sum(x == y for x, y in zip(xs, ys, strict=True)) / len(xs), len(xs))
        if xs
        else Stat(None, 0, "no pair with both verdicts" + _dropped(dropped))
    )
    return {"exact": share, "kappa_linear": linear_kappa(a, b, labels)}


def _dropped(n: int) -> str:
    return f"; {n} pair(s) without a prediction left out" if n else ""
