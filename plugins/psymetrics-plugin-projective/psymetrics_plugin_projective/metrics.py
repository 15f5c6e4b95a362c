"""The validity metrics of the authors' code release beyond the paper's accuracy and Hamming.

Wang et al. (2026) report exact-match accuracy and the mean MBTI Hamming distance; their code
(``genpt/evaluation/metrics.py``, extraction notes §11.4) also computes:

- ``macro_f1``: F1 per class averaged over a **fixed** class set (1-5 for Big Five levels
  pooled over the five traits, 0-3 for the risks); a class that is neither true nor predicted
  counts 0, as in their code and ``sklearn.metrics.f1_score(..., labels=classes,
  average="macro", zero_division=0)``;
- ``mae``: mean absolute level difference;
- ``axis_accuracy``: per MBTI axis, the share of correct letters;
- ``type_accuracy``: the share of whole MBTI types correct;
- ``all_correct``: the share of targets with every Big Five trait correct (their "exact-5").

Conventions here (each function says so): a missing prediction (an unparsed diagnosis under
the default ``--unparsed missing``) counts as wrong wherever a hit is counted (accuracy, F1,
type, all-five), as ``drift.exact_accuracy`` does, and is left out of the MAE (its count in
the reason). Targets without a label are left out. A statistic that cannot be computed is
``None`` with a reason, never 0: no labelled target, no prediction at all, or (macro-F1)
labels of one class only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .drift import Stat

__all__ = ["macro_f1", "mae", "axis_accuracy", "type_accuracy", "all_correct"]

Level = int | None


def _labelled(predicted: Sequence[Level], truth: Sequence[Level]) -> list[tuple[Level, int]]:
    if len(predicted) != len(truth):
        raise ValueError("predictions and ground truth differ in length")
    return [(p, int(t)) for p, t in zip(predicted, truth, strict=True) if t is not None]


def _no_prediction(pairs: Sequence[tuple[Level, int]]) -> Stat | None:
    if not pairs:
        return Stat(None, 0, "no ground truth")
    if all(p is None for p, _ in pairs):
        return Stat(None, len(pairs), f"no parsed prediction ({len(pairs)} missing)")
    return None


def macro_f1(predicted: Sequence[Level], truth: Sequence[Level], classes: Sequence[int]) -> Stat:
    """Macro-F1 over the fixed ``classes`` (a missing prediction is a miss of its true class).

    Undefined with no labelled target, no prediction, or labels of a single class (then the
    average is set by classes nobody has, not by the predictions).
    """
    pairs = _labelled(predicted, truth)
    if (bad := _no_prediction(pairs)) is not None:
        return bad
    true_classes = sorted({t for _, t in pairs})
    if len(true_classes) < 2:
        why = f"undefined: the labels have one class only ({true_classes[0]})"
        return Stat(None, len(pairs), why)
    f1s = []
    for c in classes:
        tp = sum(p == c and t == c for p, t in pairs)
        fp = sum(p == c and t != c for p, t in pairs)
        fn = sum(p != c and t == c for p, t in pairs)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return Stat(sum(f1s) / len(f1s), len(pairs))


def mae(predicted: Sequence[Level], truth: Sequence[Level]) -> Stat:
    """Mean absolute difference between predicted and true levels (missing predictions left out)."""
    pairs = _labelled(predicted, truth)
    if (bad := _no_prediction(pairs)) is not None:
        return bad
    errors = [abs(int(p) - t) for p, t in pairs if p is not None]
    dropped = len(pairs) - len(errors)
    reason = f"{dropped} target(s) without a prediction left out" if dropped else None
    return Stat(sum(errors) / len(errors), len(errors), reason)


def axis_accuracy(predicted: Sequence[str | None], truth: Sequence[str | None]) -> dict[str, Stat]:
    """Per MBTI axis (EI, SN, TF, JP): share of correct letters; a missing type is wrong."""
    out: dict[str, Stat] = {}
    for i, axis in enumerate(("EI", "SN", "TF", "JP")):
        pred = [None if not p else (0 if p[i].upper() == axis[0] else 1) for p in predicted]
        true = [None if not t else (0 if t[i].upper() == axis[0] else 1) for t in truth]
        pairs = _labelled(pred, true)
        out[axis] = _hits(pairs, lambda p, t: p == t)
    return out


def type_accuracy(predicted: Sequence[str | None], truth: Sequence[str | None]) -> Stat:
    """Share of whole four-letter types correct; a missing type is wrong."""
    if len(predicted) != len(truth):
        raise ValueError("predictions and ground truth differ in length")
    pairs = [(p, t) for p, t in zip(predicted, truth, strict=True) if t]
    return _hits(pairs, lambda p, t: p.upper() == t.upper())


def all_correct(predicted: Sequence[Sequence[Level]], truth: Sequence[Sequence[Level]]) -> Stat:
    """Share of targets with every dimension correct (targets lacking a label left out)."""
    if len(predicted) != len(truth):
        raise ValueError("predictions and ground truth differ in length")
    pairs = [
        (p if any(x is not None for x in p) else None, t)
        for p, t in zip(predicted, truth, strict=True)
        if all(x is not None for x in t)
    ]
    return _hits(pairs, lambda p, t: all(a == b for a, b in zip(p, t, strict=True)))


def _hits(pairs: Sequence[tuple[Any, Any]], hit: Callable[[Any, Any], bool]) -> Stat:
    if not pairs:
        return Stat(None, 0, "no ground truth")
    present = [(p, t) for p, t in pairs if p is not None]
    if not present:
        return Stat(None, len(pairs), f"no parsed prediction ({len(pairs)} missing)")
    n_hit = sum(bool(hit(p, t)) for p, t in present)
    return Stat(n_hit / len(pairs), len(pairs))
