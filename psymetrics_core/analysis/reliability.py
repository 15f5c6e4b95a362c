"""Internal consistency (Cronbach's alpha, McDonald's omega) and test-retest ICC.

For a model, the "respondents" are administrations (condition cells x seeded repeats) of the
same model, not people: alpha and omega then say how consistently the items of a scale move
together across administrations, which Jung et al. (2025) warns is not the human meaning.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["cronbach_alpha", "mcdonald_omega", "omega_from_loadings", "omega_from_corr", "icc"]


def cronbach_alpha(data: pd.DataFrame) -> dict[str, Any]:
    """Alpha over rows (respondents) x columns (items) on complete rows (pingouin, listwise).

    alpha = k/(k-1) * (1 - sum(var_i) / var_total). NaN (with a note) when fewer than 2 items
    or 3 complete rows, or when the total score does not vary.
    """
    import pingouin as pg

    d = data.dropna(axis=1, how="all").dropna(axis=0, how="any")
    n, k = d.shape
    out: dict[str, Any] = {"alpha": float("nan"), "ci95": [float("nan")] * 2, "n": n, "k": k}
    if k < 2 or n < 3:
        out["note"] = f"needs 2+ items and 3+ complete administrations (has {k} and {n})"
        return out
    if not d.sum(axis=1).var(ddof=1) > 0:
        out["note"] = "total score does not vary across administrations"
        return out
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        a, ci = pg.cronbach_alpha(data=d, nan_policy="listwise")
    out["alpha"] = float(a)
    out["ci95"] = [float(ci[0]), float(ci[1])]
    return out


def omega_from_loadings(loadings: np.ndarray, uniquenesses: np.ndarray) -> float:
    """McDonald's omega total: (sum lambda)^2 / ((sum lambda)^2 + sum psi)."""
    s = float(np.sum(loadings)) ** 2
    return s / (s + float(np.sum(uniquenesses)))


def mcdonald_omega(data: pd.DataFrame) -> dict[str, Any]:
    """Omega total from a one-factor model of the item correlations (statsmodels Factor).

    Items without variance are dropped (their correlation is undefined). ML extraction is
    tried first, principal-axis factoring if ML fails.
    """

    d = data.dropna(axis=1, how="all").dropna(axis=0, how="any")
    d = d.loc[:, d.std() > 0]
    n, k = d.shape
    out: dict[str, Any] = {"omega": float("nan"), "n": n, "k": k, "method": None}
    if k < 3 or n < 3:
        out["note"] = f"omega needs 3+ varying items and 3+ complete administrations ({k}, {n})"
        return out
    corr = d.corr().to_numpy()
    if not np.all(np.isfinite(corr)):
        out["note"] = "item correlations undefined (too few complete pairs)"
        return out
    if np.linalg.eigvalsh(corr).min() < 1e-8:
        out["note"] = (
            "item correlations are singular (omega needs more distinct administrations than items)"
        )
        return out
    return {**out, **omega_from_corr(corr, n)}


def omega_from_corr(corr: np.ndarray, nobs: int) -> dict[str, Any]:
    """Fit one factor to ``corr`` and return omega, loadings and the method used."""
    from statsmodels.multivariate.factor import Factor

    for method in ("ml", "pa"):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                res = Factor(corr=corr, n_factor=1, method=method, nobs=nobs).fit()
            lam = np.abs(np.asarray(res.loadings)[:, 0])
            psi = np.clip(1.0 - lam**2, 0.0, None)
            if np.all(np.isfinite(lam)):
                return {
                    "omega": omega_from_loadings(lam, psi),
                    "loadings": [float(x) for x in lam],
                    "method": method,
                }
        except Exception:  # noqa: BLE001 - a failed extraction falls back / reports NaN
            continue
    return {"omega": float("nan"), "method": None, "note": "one-factor model did not fit"}


def icc(long: pd.DataFrame, targets: str, raters: str, ratings: str) -> dict[str, Any]:
    """Shrout & Fleiss ICCs (pingouin): ICC1, ICC2 (A,1), ICC3 (C,1) and their k versions.

    ``targets`` are the things measured (items), ``raters`` the occasions (repeats).
    """
    import pingouin as pg

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
