"""Criterion validity against persona labels: Spearman's rho or AUC, each with a 95% CI.

rho's interval is Fisher's z with Bonett & Wright's (2000) standard error for Spearman's
rho, sqrt((1 + rho^2 / 2) / (n - 3)). AUC = P(score of a positive > score of a negative)
+ 1/2 P(tie) (the Mann-Whitney statistic); its interval is DeLong et al.'s (1988) variance
on the logit scale, so it stays inside (0, 1). Undefined values are None with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm, spearmanr

from psymetrics_core.analysis.population.data import ScaleStructure
from psymetrics_core.base.types import Instrument

__all__ = [
    "Criterion",
    "CriterionRow",
    "spearman",
    "auc",
    "label_values",
    "criterion_row",
    "with_composites",
]


@dataclass(frozen=True)
class Criterion:
    """One criterion statistic (``rho`` or ``auc``) with its 95% interval."""

    statistic: str
    value: float | None
    ci95: tuple[float, float] | None
    n: int
    reason: str | None = None


@dataclass(frozen=True)
class CriterionRow:
    """Criterion validity of one scale against one label: the statistic over ``unit``s
    (respondents, or personas when several respondents share one); ``positive``: the level of
    a two-valued text label counted as 1."""

    scale: str
    label: str
    result: Criterion
    unit: str = "respondent"
    positive: str | None = None

    def to_json(self) -> dict[str, Any]:
        c = self.result
        return {
            "scale": self.scale,
            "label": self.label,
            "statistic": c.statistic,
            "value": c.value,
            "ci95": c.ci95,
            "n": c.n,
            "reason": c.reason,
            "unit": self.unit,
            "positive": self.positive,
        }


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
    if np.unique(x).size < 2:  # a constant run: every respondent has the same score
        why = "the scores never vary (every respondent has the same score): nobody ranks higher"
        return Criterion("auc", None, None, n, why)
    pos, neg = x[y == 1], x[y == 0]
    if len(pos) < 2 or len(neg) < 2:
        return Criterion(
            "auc",
            None,
            None,
            n,
            f"{_count(len(pos), 'positive')} and "
            f"{_count(len(neg), 'negative')} (an AUC needs 2+ of each)",
        )
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


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _text(v: Any) -> str | None:
    """A label value as stripped text (None: missing or empty)."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    return str(v).strip() or None


def label_values(name: str, y: pd.Series) -> tuple[np.ndarray | None, str | None, str | None]:
    """A label as numbers: numeric values as they are (two values: the higher = 1); two text
    values as 0/1 (the later in sorted order = 1, returned as the positive level); other text
    is None with the reason."""
    text = pd.Series([_text(v) for v in y], index=y.index, dtype=object)
    num = pd.to_numeric(text, errors="coerce")
    present = text.dropna()
    if num[present.index].notna().all():
        levels = sorted(set(num.dropna().tolist()))
        if len(levels) == 2:
            return (num == levels[1]).astype(float).where(num.notna()).to_numpy(float), None, None
        return num.to_numpy(dtype=float), None, None
    kinds = sorted(set(present.tolist()))
    if len(kinds) == 2:
        out = (text == kinds[1]).astype(float).where(text.notna()).to_numpy(float)
        return out, kinds[1], None
    shown = ", ".join(kinds[:4]) + (", ..." if len(kinds) > 4 else "")
    return (
        None,
        None,
        (
            f"label {name!r} has {len(kinds)} text values ({shown}): criterion "
            "validity needs numbers or two values"
        ),
    )


def criterion_row(
    scale: str, name: str, scores: np.ndarray, label: pd.Series, persona: pd.Series
) -> CriterionRow:
    """Criterion validity of one scale against one label: AUC for a two-valued label, else
    Spearman's rho. Labels belong to personas: when several respondents share a persona
    (prompt variants, repeats) and its label, the unit is the persona (its mean score), so
    variants are not counted as independent people."""
    y, positive, why = label_values(name, label)
    if y is None:
        return CriterionRow(scale, name, Criterion("rho", None, None, 0, why))
    x, unit = np.asarray(scores, dtype=float), "respondent"
    frame = pd.DataFrame({"p": persona.to_numpy(), "x": x, "y": y})
    grouped = frame.groupby("p", sort=False)
    if grouped.ngroups < len(frame) and bool((grouped["y"].nunique(dropna=False) <= 1).all()):
        agg = grouped.agg(x=("x", "mean"), y=("y", "first"))
        x, y, unit = agg["x"].to_numpy(float), agg["y"].to_numpy(float), "persona"
    two = np.unique(y[~np.isnan(y)]).size == 2
    return CriterionRow(scale, name, auc(x, y) if two else spearman(x, y), unit, positive)


def with_composites(
    structure: ScaleStructure, inst: Instrument | None, form: str, columns: Sequence[str]
) -> ScaleStructure:
    """``structure`` with the instrument's composite scales added (a total over every item,
    a union of scales: what ``psym show`` lists beside the item scales), over the items in
    ``columns``: criterion validity may name them (``--criterion total=FIELD``)."""
    if inst is None or form not in inst.forms:
        return structure
    present = set(map(str, columns))
    scales = dict(structure.scales)
    for name, sdef in inst.scales.items():
        if name in scales or not (sdef.include_all or sdef.of_scales):
            continue
        items = tuple(
            it.id for it in inst.forms[form] if it.id in present and inst.counts_towards(it, name)
        )
        if items:
            scales[name] = items
    return ScaleStructure(scales, dict(structure.reverse))
