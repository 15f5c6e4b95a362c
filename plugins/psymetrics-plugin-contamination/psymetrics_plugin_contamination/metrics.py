"""The probes' metrics and analytic baselines (Han et al., 2025, §2 and the notes' §5).

Every metric is a function of per-item records so that the bootstrap can resample items.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

from .inventory import Inventory, ProbeItem

__all__ = [
    "edit_distance",
    "aed",
    "macro_f1",
    "option_errors",
    "ratio",
    "no_reverse_option_mae",
    "random_option_mae",
    "random_target_mae",
    "chance_macro_f1",
]


def edit_distance(a: str, b: str) -> int:
    """Character-level Levenshtein distance (unit costs), via rapidfuzz."""
    return int(Levenshtein.distance(a, b))


def ratio(pairs: Sequence[tuple[float, float]]) -> float | None:
    """Σ numerators / Σ denominators (None when the denominator sum is 0)."""
    den = sum(d for _, d in pairs)
    return sum(n for n, _ in pairs) / den if den else None


def aed(references: Sequence[str], outputs: Sequence[str]) -> float | None:
    """Normalised average edit distance: mean ED over items divided by the mean item length,
    which equals Σ ED / Σ len(reference)."""
    return ratio([(edit_distance(r, o), len(r)) for r, o in zip(references, outputs, strict=True)])


def macro_f1(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> float | None:
    """Macro-F1 over ``labels``; a prediction outside ``labels`` (``INVALID``) is a false
    negative of its gold class and a false positive of none; a class with no gold, no
    prediction scores 0 (scikit-learn's ``zero_division=0``). None without labels."""
    if not labels:
        return None
    f1s = []
    for lab in labels:
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == lab and p == lab)
        fp = sum(1 for g, p in zip(gold, pred, strict=True) if g != lab and p == lab)
        fn = sum(1 for g, p in zip(gold, pred, strict=True) if g == lab and p != lab)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / len(f1s)


def option_errors(
    gold: Sequence[float], pred: Sequence[float] | None, lo: float, hi: float, policy: str
) -> tuple[float, int] | None:
    """(Σ_r |gold_r - pred_r|, R) for one item, or None when the item is dropped.

    A prediction with the wrong count (or none) follows ``policy``: ``max_error`` scores the
    largest error any in-range answer could make, ``drop`` drops the item, ``truncate_pad``
    cuts extra numbers and pads missing ones with ``lo``.
    """
    r = len(gold)
    if pred is not None and len(pred) == r:
        return sum(abs(g - p) for g, p in zip(gold, pred, strict=True)), r
    if policy == "drop":
        return None
    if policy == "truncate_pad" and pred is not None:
        fixed = list(pred[:r]) + [lo] * max(0, r - len(pred))
        return sum(abs(g - p) for g, p in zip(gold, fixed, strict=True)), r
    return sum(max(g - lo, hi - g) for g in gold), r


def no_reverse_option_mae(items: Sequence[ProbeItem]) -> float | None:
    """Option-score MAE of a model that ignores reverse keying: it scores every item's options
    with the item's keyed values in ascending order, as if each item were keyed forward
    (BFI-44: 16 reversed items x 12 / 220 = 0.873). The values are those of the scoring base
    in use, so under ``score_base=one`` a forward item costs nothing (MFQ, no reversed item:
    0), where comparing with the 0-based raw codes would charge 1 per option."""
    pairs = []
    for it in items:
        gold = it.gold_scores()
        pairs.append((sum(abs(g - f) for g, f in zip(gold, sorted(gold), strict=True)), len(gold)))
    return ratio([(float(n), float(d)) for n, d in pairs])


def _uniform_values(it: ProbeItem) -> list[float]:
    lo, hi = it.keyed_range
    return [float(v) for v in range(int(round(lo)), int(round(hi)) + 1)]


def random_option_mae(items: Sequence[ProbeItem]) -> float | None:
    """Expected option-score MAE of guessing each score uniformly among the integers of the
    item's keyed range."""
    num = 0.0
    den = 0
    for it in items:
        vals = _uniform_values(it)
        for g in it.gold_scores():
            num += sum(abs(g - v) for v in vals) / len(vals)
            den += 1
    return num / den if den else None


def random_target_mae(items: Sequence[ProbeItem], rule: str) -> float | None:
    """Expected target-score MAE of picking an option uniformly at random."""
    errs = []
    for it in items:
        for cond in ("min", "mid", "max"):
            t = it.target(cond, rule)
            errs.append(sum(abs(t - o.keyed) for o in it.options) / len(it.options))
    return sum(errs) / len(errs) if errs else None


def chance_macro_f1(inv: Inventory) -> float | None:
    """Expected macro-F1 (large-sample) of naming a dimension uniformly at random:
    mean over dimensions of 2·p·q / (p + q), p the dimension's share of items, q = 1/D."""
    items = inv.scored
    if not items or len(inv.dimensions) < 2:
        return None
    q = 1 / len(inv.dimensions)
    out = []
    for d in inv.dimensions:
        p = sum(1 for it in items if it.dimension == d) / len(items)
        out.append(2 * p * q / (p + q) if p + q else 0.0)
    return sum(out) / len(out)
