"""Fit indices as lavaan defines them, and the checks that refuse degenerate data.

chi-square uses the N divisor (lavaan's ML, ``likelihood = "normal"``); the baseline is the
independence model (free variances, and free means with a mean structure) per group;
CFI, TLI and RMSEA with its 90% interval follow lavaan's ``fitMeasures`` (RMSEA times
sqrt(G) for G groups); SRMR is Bentler's: residual covariances scaled by the observed
standard deviations, root mean square over the p(p+1)/2 non-redundant elements (semopy has
none; this is lavaan's ``srmr_bentler`` for a model without mean structure).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.stats import chi2, ncx2

__all__ = [
    "FitIndices",
    "baseline_chisq",
    "fit_indices",
    "srmr",
    "rmsea_ci",
    "constant_items",
    "dependent_items",
    "natural_key",
    "SATURATED",
    "fit_caveat",
]


@dataclass(frozen=True)
class FitIndices:
    """Global fit of one model: chi-square test, CFI, TLI, RMSEA (90% CI) and SRMR."""

    chisq: float
    df: int
    pvalue: float | None
    cfi: float | None
    tli: float | None
    rmsea: float | None
    rmsea_ci90: tuple[float, float] | None
    srmr: float | None
    n: int
    baseline_chisq: float
    baseline_df: int
    reason: str | None = None  # why CFI and TLI are None, when they are
    # what the fit is when no index may be read as "good": a saturated model (df 0) fits
    # by construction; items that do not covary leave no structure to fit (no verdicts then)
    caveat: str | None = None


SATURATED = (
    "saturated model (df 0): it reproduces the covariances exactly by construction, so its "
    "fit indices say nothing about whether it fits"
)


# Kenny's (2015, "Measuring model fit") rule: when the independence model's RMSEA is below
# .158, the items covary so weakly that the incremental indices cannot be informative (and
# RMSEA and SRMR have little misfit to find): no index is read as a verdict then
WEAK_BASELINE_RMSEA = 0.158


def fit_caveat(
    df: int, baseline_reason: str | None, baseline_rmsea: float | None = None
) -> str | None:
    """Why no fit index of a model may be labelled good (None: they may be read)."""
    if df == 0:
        return SATURATED
    if baseline_reason is not None:
        return f"no structure to fit: {baseline_reason}; any model fits such data"
    if baseline_rmsea is not None and baseline_rmsea < WEAK_BASELINE_RMSEA:
        return (
            f"little structure to fit: the independence model's RMSEA is {baseline_rmsea:.3f}, "
            f"under {WEAK_BASELINE_RMSEA} (Kenny 2015): the items barely covary, so no index "
            "can tell a good model from none"
        )
    return None


def baseline_chisq(covs: list[np.ndarray], ns: list[int]) -> tuple[float, int]:
    """chi-square and df of the independence model: sum_g N_g (sum log s_jj - log|S_g|)."""
    chi = 0.0
    for s, n in zip(covs, ns, strict=True):
        chi += n * (float(np.sum(np.log(np.diag(s)))) - float(np.linalg.slogdet(s)[1]))
    p = covs[0].shape[0]
    return chi, len(covs) * p * (p - 1) // 2


def rmsea_ci(chisq: float, df: int, n: int, n_groups: int = 1) -> tuple[float, float] | None:
    """lavaan's 90% interval: the noncentrality lambda where P(X2 | df, lambda) = .95 / .05."""
    if df <= 0:
        return None

    def solve(target: float) -> float:
        if chi2.cdf(chisq, df) < target:
            return 0.0
        f = lambda lam: float(ncx2.cdf(chisq, df, lam)) - target  # noqa: E731
        hi = max(chisq, 1.0)
        while f(hi) > 0:
            hi *= 2.0
        return float(brentq(f, 1e-12, hi, xtol=1e-12))

    scale = np.sqrt(n_groups)
    lo, up = solve(0.95), solve(0.05)
    return (float(np.sqrt(lo / (n * df)) * scale), float(np.sqrt(up / (n * df)) * scale))


def srmr(observed: np.ndarray, implied: np.ndarray) -> float:
    """Bentler's SRMR: sqrt(mean over i <= j of ((s_ij - sigma_ij) / sqrt(s_ii s_jj))^2)."""
    sd = np.sqrt(np.diag(observed))
    resid = (observed - implied) / np.outer(sd, sd)
    tri = np.tril_indices(observed.shape[0])
    return float(np.sqrt(np.mean(resid[tri] ** 2)))


def fit_indices(
    chisq: float,
    df: int,
    base: tuple[float, int],
    n: int,
    n_groups: int = 1,
    srmr_value: float | None = None,
) -> FitIndices:
    """CFI, TLI, RMSEA (with its interval) from the model's and the baseline's chi-square."""
    bchi, bdf = base
    pval = float(chi2.sf(chisq, df)) if df > 0 else None
    cfi = tli = None
    why = _baseline_refusal(bchi, bdf)
    if why is None:
        denom = max(chisq - df, bchi - bdf, 0.0)
        cfi = 1.0 - max(chisq - df, 0.0) / denom if denom > 0 else None
        if df > 0:
            tli = (bchi / bdf - chisq / df) / (bchi / bdf - 1.0)
    rmsea = _rmsea(chisq, df, n, n_groups)
    return FitIndices(
        chisq,
        df,
        pval,
        cfi,
        tli,
        rmsea,
        rmsea_ci(chisq, df, n, n_groups),
        srmr_value,
        n,
        bchi,
        bdf,
        why,
        fit_caveat(df, why, _rmsea(bchi, bdf, n, n_groups)),
    )


BASELINE_ALPHA = 0.05


def _rmsea(chisq: float, df: int, n: int, n_groups: int = 1) -> float | None:
    """lavaan's RMSEA of a chi-square (None without df)."""
    if df <= 0 or n <= 0:
        return None
    return float(np.sqrt(max(chisq / n / df - 1.0 / n, 0.0)) * np.sqrt(n_groups))


def _baseline_refusal(bchi: float, bdf: int) -> str | None:
    """Why CFI and TLI are undefined: they compare the model's misfit with the independence
    model's, which says nothing when the independence model itself is not rejected (the items
    do not covary detectably: CFI is then 1 or 0 by chance and TLI unbounded). Our choice; lavaan
    prints numbers there (CFI 1 when both misfits are 0)."""
    if bdf <= 0:
        return "the independence model has no degrees of freedom"
    p = float(chi2.sf(bchi, bdf))
    if p > BASELINE_ALPHA:
        return (
            f"the items do not covary detectably (independence model chi2 {bchi:.2f}, df "
            f"{bdf}, p {p:.2f})"
        )
    return None


def constant_items(values: pd.DataFrame) -> list[str]:
    """Items whose answered values never vary (or that nobody answered), in natural order
    (ids as numbers where numeric: 2 before 10)."""
    const = [str(c) for c in values.columns if values[c].nunique(dropna=True) < 2]
    return sorted(const, key=natural_key)


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key of an item id: its digit runs as numbers (``q2`` before ``q10``)."""
    parts = [p for p in re.split(r"(\d+)", str(name)) if p]
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def dependent_items(cov: np.ndarray, names: list[str], tol: float = 1e-8) -> list[str] | None:
    """None when ``cov`` is positive definite; else the items in its near-null directions."""
    sd = np.sqrt(np.clip(np.diag(cov), 1e-300, None))
    corr = cov / np.outer(sd, sd)
    vals, vecs = np.linalg.eigh(corr)
    null = vecs[:, vals < tol]
    if null.shape[1] == 0:
        return None
    weight = np.abs(null).max(axis=1)
    return [n for n, w in zip(names, weight, strict=True) if w > 0.05] or list(names)
