"""Internal consistency (Cronbach's alpha, McDonald's omega) and test-retest ICC.

For a model, the "respondents" are administrations (condition cells x seeded repeats) of the
same model, not people: alpha and omega then say how consistently the items of a scale move
together across administrations, which is not their human meaning (Jung et al., 2026).
An undefined statistic is None with a ``note`` giving the reason.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import f as f_dist

from psymetrics_core.analysis.population.missing import em_moments

__all__ = [
    "cronbach_alpha",
    "mcdonald_omega",
    "omega_from_loadings",
    "omega_from_corr",
    "icc",
    "DELETION",
]

DELETION = ("listwise", "pairwise", "fiml")  # the --missing policies (population.missing)


def cronbach_alpha(data: pd.DataFrame, deletion: str = "listwise") -> dict[str, Any]:
    """Alpha over rows (respondents) x columns (items), with the rows used of the rows given.

    alpha = k/(k-1) * (1 - trace(C) / sum(C)), C the item covariance matrix (ddof 1).
    ``listwise`` (default) uses complete rows only (as pingouin's ``nan_policy='listwise'``);
    ``pairwise`` estimates each covariance from the rows that answered both items (as R
    psych's ``alpha``, ``use = "pairwise"``) and uses every row with 2+ answered items;
    ``fiml`` takes C from the EM estimate of the saturated covariances over every row with an
    answer (Enders 2003). None (with a note) when fewer than 2 items or 3 usable rows, or
    when the total score does not vary.
    """
    if deletion not in DELETION:
        raise ValueError(f"deletion must be one of {', '.join(DELETION)}, got {deletion!r}")
    given = int(len(data))
    d = data.dropna(axis=1, how="all").astype(float)
    if deletion == "listwise":
        d = d.dropna(axis=0, how="any")
    elif deletion == "fiml":
        d = d.dropna(axis=0, how="all")
    else:
        d = d[d.notna().sum(axis=1) >= 2]
    n, k = d.shape
    out: dict[str, Any] = {
        "alpha": None,
        "ci95": None,
        "n": n,
        "k": k,
        "rows_given": given,
        "deletion": deletion,
    }
    out["rows_used"] = f"{n} of {given}"
    if k < 2 or n < 3:
        out["note"] = f"needs 2+ items and 3+ usable rows ({deletion}; has {k} and {n})"
        return out
    cov = d.cov(ddof=1).to_numpy()  # pandas: pairwise-complete covariances
    total = float(np.nansum(cov)) if deletion == "pairwise" else float(d.sum(axis=1).var(ddof=1))
    if deletion == "fiml" and d.isna().to_numpy().any():
        cov = em_moments(d.to_numpy(dtype=float))[1]
        total = float(cov.sum())
    if not np.all(np.isfinite(cov)):
        out["note"] = "some item pairs share fewer than 2 answered rows (pairwise)"
        return out
    if not total > 0:
        out["note"] = "total score does not vary across rows"
        return out
    out["alpha"] = k / (k - 1) * (1 - float(np.trace(cov)) / total)
    if deletion == "listwise":
        out["ci95"] = _alpha_ci(out["alpha"], n, k)
    return out


def _alpha_ci(alpha: float, n: int, k: int) -> list[float]:
    """Feldt's F-based 95% interval of alpha (as pingouin's ``cronbach_alpha``)."""
    df1, df2 = n - 1, (n - 1) * (k - 1)
    lo = 1 - (1 - alpha) * float(f_dist.isf(0.025, df1, df2))
    hi = 1 - (1 - alpha) * float(f_dist.isf(0.975, df1, df2))
    return [lo, hi]


def omega_from_loadings(loadings: np.ndarray, uniquenesses: np.ndarray) -> float:
    """Model-implied omega total with signed loadings: (sum l)^2 / ((sum l)^2 + sum psi)."""
    s = float(np.sum(loadings)) ** 2
    return s / (s + float(np.sum(uniquenesses)))


def mcdonald_omega(data: pd.DataFrame) -> dict[str, Any]:
    """Omega total from a one-factor model of the item correlations (complete rows).

    Items without variance are dropped (their correlation is undefined). Loadings keep their
    sign: an item loading negatively lowers omega and is listed in ``warnings`` (as R psych
    warns about items that "probably should be reversed"). A singular correlation matrix or
    a failed fit gives omega None with the reason.
    """
    given = int(len(data))
    d = data.dropna(axis=1, how="all").dropna(axis=0, how="any").astype(float)
    d = d.loc[:, d.std() > 0]
    n, k = d.shape
    out: dict[str, Any] = {
        "omega": None,
        "n": n,
        "k": k,
        "method": None,
        "rows_used": f"{n} of {given}",
    }
    if k < 3 or n < 3:
        out["note"] = f"omega needs 3+ varying items and 3+ complete rows (has {k} and {n})"
        return out
    corr = d.corr().to_numpy()
    if not np.all(np.isfinite(corr)):
        out["note"] = "item correlations undefined (too few complete pairs)"
        return out
    if np.linalg.eigvalsh(corr).min() < 1e-8:
        out["note"] = (
            "item correlation matrix is singular (an item is a linear function of others, or "
            "there are fewer distinct rows than items): no one-factor model can be fitted"
        )
        return out
    res = omega_from_corr(corr, n)
    if res.get("loadings") is not None:
        neg = [str(c) for c, lam in zip(d.columns, res["loadings"], strict=True) if lam < 0]
        if neg:
            res["negative_items"] = neg
            res["warnings"] = [
                f"items {', '.join(neg)} load negatively on the common factor and probably "
                "should be reversed (omega uses the signed loadings)"
            ]
    return {**out, **res}


def omega_from_corr(corr: np.ndarray, nobs: int) -> dict[str, Any]:
    """Fit one factor to ``corr`` (maximum likelihood, principal axis if ML fails).

    omega = 1 - sum(psi) / sum(R), with psi = 1 - l^2 from SIGNED loadings and sum(R) the
    variance of the standardised total score: R psych's ``omega(..., nfactors = 1, fm = "ml",
    flip = FALSE)$omega.tot``. The factor is oriented so that the loadings sum to >= 0.
    """
    from statsmodels.multivariate.factor import Factor  # on demand: the [analysis] extra

    total = float(np.sum(corr))
    if not total > 0:
        why = "the items' correlations cancel out (the total score has no variance)"
        return {"omega": None, "method": None, "note": why}
    for method in ("ml", "pa"):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                res = Factor(corr=corr, n_factor=1, method=method, nobs=nobs).fit(rng=0)
            lam = np.asarray(res.loadings)[:, 0]
        except Exception:  # noqa: BLE001 - a failed extraction falls back / reports why
            continue
        if not np.all(np.isfinite(lam)):
            continue
        if lam.sum() < 0:
            lam = -lam
        psi = np.clip(1.0 - lam**2, 0.0, None)
        return {
            "omega": 1.0 - float(psi.sum()) / total,
            "loadings": [float(x) for x in lam],
            "method": method,
        }
    return {"omega": None, "method": None, "note": "the one-factor model did not converge"}


def icc(long: pd.DataFrame, targets: str, raters: str, ratings: str) -> dict[str, Any]:
    """Shrout & Fleiss ICCs (pingouin): ICC1, ICC2 (A,1), ICC3 (C,1) and their k versions.

    ``targets`` are the things measured (items), ``raters`` the occasions (repeats).
    """
    import pingouin as pg  # on demand: the [analysis] extra

    d = long.dropna(subset=[ratings])
    counts = d.groupby(targets)[raters].nunique()
    keep = counts[counts == d[raters].nunique()].index
    d = d[d[targets].isin(keep)]
    out: dict[str, Any] = {"n_targets": int(d[targets].nunique()), "k": int(d[raters].nunique())}
    if out["n_targets"] < 2 or out["k"] < 2 or len(d) < 5:
        out["note"] = "needs 2+ targets answered on every occasion, 2+ occasions, 5+ ratings"
        return out
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            tab = pg.intraclass_corr(data=d, targets=targets, raters=raters, ratings=ratings)
        except (AssertionError, ValueError) as exc:  # pingouin's own input checks
            out["note"] = f"ICC not computable: {exc}"
            return out
    for _, row in tab.iterrows():
        out[str(row["Type"])] = float(row["ICC"])
    return out
