"""Convergent validity across models: declared hypotheses, Spearman's rho, Fisher-z CI.

Jung et al. (2026): rho over models of seed-averaged scores; 95% CI = tanh(atanh(r) +- 1.96 /
sqrt(n - 3)); strength labels of Schober et al. (2018). ``spearman_fisher`` is the one
Spearman of ``psym analyze`` and ``psym validity``; the unit of analysis is defined in
``analysis.records``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from psymetrics_core.base.errors import PsymError

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = [
    "Hypothesis",
    "parse_hypothesis",
    "check_hypotheses",
    "spearman_fisher",
    "schober",
    "DEFAULT_HYPOTHESES",
]


@dataclass(frozen=True)
class Hypothesis:
    """Score A and score B (``task.scale``) are expected to correlate with ``sign`` (+1/-1)."""

    a: str
    b: str
    sign: int
    source: str = ""


# The three convergent-validity hypotheses of Jung et al. (2026). SR2K's ``racism`` scale is
# inverted so that higher = more symbolic racism (the paper's analysis orientation).
DEFAULT_HYPOTHESES = (
    Hypothesis("asi.total", "sr2k.racism", +1, "Jung et al. (2026): sexism ~ racism"),
    Hypothesis("mfq.authority", "asi.benevolent", +1, "Jung et al. (2026): Authority ~ BS"),
    Hypothesis("mfq.fairness", "asi.hostile", -1, "Jung et al. (2026): Fairness ~ HS"),
)


def parse_hypothesis(text: str) -> Hypothesis:
    """``task.scale~task.scale:+`` (or ``:-``) -> Hypothesis; bad text is a PsymError."""
    body, _, sign = text.rpartition(":")
    a, _, b = body.partition("~")
    if sign not in ("+", "-") or not a.strip() or not b.strip():
        raise PsymError(
            f"--hypothesis {text!r}: expected TASK.SCALE~TASK.SCALE:+ or :- "
            "(e.g. mfq.authority~mfq.loyalty:+)"
        )
    return Hypothesis(a.strip(), b.strip(), 1 if sign == "+" else -1, "declared")


def check_hypotheses(hyps: Sequence[Hypothesis], scores: Sequence[str], session: Session) -> None:
    """A PsymError naming the first score that no instrument of ``session`` defines and no run
    has.

    ``scores`` are the ``task.scale`` names present in the runs analysed.
    """
    have = set(scores)
    for h in hyps:
        for name in (h.a, h.b):
            if name in have:
                continue
            task, _, scale = name.partition(".")
            known = _declared_scales(task, session)
            if known is not None and scale in known:
                continue
            what = (
                f"task '{task}' has the scales {', '.join(known)}"
                if known
                else f"task '{task}' is neither installed nor in the runs"
            )
            raise PsymError(f"hypothesis {h.a}~{h.b}: no score '{name}' ({what})")


def _declared_scales(task: str, session: Session) -> list[str] | None:
    """The scales the instrument ``task`` of ``session`` declares (None when it has none)."""
    try:
        return list(session.get_instrument(task).scales)
    except PsymError:
        return None


def schober(r: float) -> str:
    """Strength label of Schober et al. (2018) for |r|."""
    if not np.isfinite(r):
        return "undefined"
    a = abs(r)
    for cut, name in ((0.9, "very strong"), (0.7, "strong"), (0.4, "moderate"), (0.1, "weak")):
        if a >= cut:
            return name
    return "negligible"


def spearman_fisher(
    x: Sequence[float], y: Sequence[float], sign: int = 0, confidence: float = 0.95
) -> dict[str, Any]:
    """Spearman's rho (scipy, average ranks for ties), p-value (one-sided toward ``sign`` when
    given, else two-sided) and the Fisher-z CI tanh(atanh(r) +- z / sqrt(n - 3)).

    rho needs 3+ units whose scores vary (two units always give +-1); the interval needs
    4+ units and |rho| < 1. Undefined values are None with a ``note``/``ci_note``.
    """
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[ok], ya[ok]
    n = len(xa)
    out: dict[str, Any] = {"n": n, "rho": None, "p": None, "ci": None}
    if n < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        out["note"] = f"needs at least 3 units with varying scores (has {n})"
        return out
    alt = "two-sided" if sign == 0 else ("greater" if sign > 0 else "less")
    res = stats.spearmanr(xa, ya, alternative=alt)
    r = float(res.statistic)
    out.update(rho=r, p=float(res.pvalue), alternative=alt, strength=schober(r))
    if n >= 4 and abs(r) < 1:
        zc = float(stats.norm.ppf(0.5 + confidence / 2))
        se = 1 / math.sqrt(n - 3)
        out["ci"] = [math.tanh(math.atanh(r) - zc * se), math.tanh(math.atanh(r) + zc * se)]
    else:
        out["ci_note"] = "Fisher-z interval needs 4+ units and |rho| < 1"
    if sign:
        out["supported"] = bool(np.sign(r) == sign)
    return out
