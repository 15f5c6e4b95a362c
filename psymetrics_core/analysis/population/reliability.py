"""Reliability across respondents: alpha, Guttman's lambda 6 and omega total, per scale.

Missing answers follow ``--missing`` (``missing.py``): complete rows (listwise), each covariance
from the rows that answered both items (pairwise, as psych's ``alpha(use = "pairwise")``), or
the EM estimate of the saturated covariances (fiml; Enders 2003). alpha on the item covariances;
lambda 6 as R psych's ``G6(smc)``: 1 - sum(1 - smc_j) / sum(R)
on the item correlations; omega total from a one-factor ML fit (unit factor variance) with
SIGNED standardized loadings, 1 - sum(psi) / sum(R) (psych's ``omega.tot`` for one factor).
Percentile bootstrap intervals two ways, side by side: naive (respondents resampled) and
clustered (personas resampled with all their prompt variants), since 25 variants of one
persona are not 25 people. Undefined values are None with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.fitstats import constant_items, dependent_items
from psymetrics_core.analysis.population.missing import (
    RowsUsed,
    em_moments,
    pairwise_corr,
    pairwise_cov,
    rows_used,
    usable,
)
from psymetrics_core.analysis.population.mlfit import one_blas_thread
from psymetrics_core.analysis.population.omega_draws import omega_of_draws

__all__ = [
    "Undefined",
    "Coefficient",
    "ScaleReliability",
    "alpha",
    "lambda6",
    "omega_total",
    "scale_reliability",
]


class Undefined(ValueError):
    """A statistic that cannot be computed from these data; the message is the reason."""


@dataclass(frozen=True)
class Coefficient:
    """One coefficient with its naive and persona-clustered 95% percentile intervals."""

    name: str
    value: float | None
    naive_ci95: tuple[float, float] | None = None
    cluster_ci95: tuple[float, float] | None = None
    reason: str | None = None


@dataclass
class ScaleReliability:
    """alpha, lambda 6 and omega of one scale over the rows ``rows`` says (n: their count)."""

    scale: str
    n: int
    k: int
    n_clusters: int | None
    coefficients: list[Coefficient] = field(default_factory=list)
    reason: str | None = None
    rows: RowsUsed | None = None


def _cov(x: np.ndarray, missing: str = "listwise") -> np.ndarray:
    """The item covariances of ``x`` under ``missing`` (rows with gaps: pairwise or EM)."""
    if missing == "fiml" and np.isnan(x).any():
        return em_moments(x)[1]
    if missing == "pairwise":
        return pairwise_cov(pd.DataFrame(x))
    return np.cov(x.T)


def _check(x: np.ndarray, names: list[str] | None = None, n_used: int | None = None) -> None:
    k = x.shape[1]
    n = len(x) if n_used is None else n_used
    if k < 2 or n < 3:
        raise Undefined(f"needs 2+ items and 3+ respondents (has {k} and {n})")
    frame = pd.DataFrame(x, columns=names or [str(j) for j in range(k)])
    const = constant_items(frame)
    if const:
        raise Undefined(f"items that never vary: {', '.join(const)}")


def alpha(x: np.ndarray, missing: str = "listwise") -> float:
    """Cronbach's alpha: k/(k-1) (1 - trace(C) / sum(C)), C under ``missing``."""
    c = _cov(x, missing)
    total = float(c.sum())
    if not total > 0:
        raise Undefined("the total score does not vary")
    k = x.shape[1]
    return k / (k - 1) * (1.0 - float(np.trace(c)) / total)


def _corr(x: np.ndarray, names: list[str] | None, missing: str = "listwise") -> np.ndarray:
    if missing == "pairwise":
        r = pairwise_corr(pd.DataFrame(x))
        if not np.all(np.isfinite(r)) or np.linalg.eigvalsh(r).min() <= 0:
            raise Undefined("the pairwise correlation matrix is not positive definite")
    else:
        c = _cov(x, missing)
        sd = np.sqrt(np.diag(c))
        if not np.all(sd > 0):
            raise Undefined("an item does not vary")
        r = c / np.outer(sd, sd)
    dep = dependent_items(r, names or [str(j) for j in range(x.shape[1])])
    if dep is not None:
        raise Undefined(f"item correlations singular; dependent items: {', '.join(dep)}")
    return r


def lambda6(x: np.ndarray, names: list[str] | None = None, missing: str = "listwise") -> float:
    """Guttman's lambda 6 on the correlations: 1 - sum(1/diag(R^-1)) / sum(R)."""
    r = _corr(x, names, missing)
    return 1.0 - float(np.sum(1.0 / np.diag(np.linalg.inv(r)))) / float(r.sum())


def omega_total(
    x: np.ndarray,
    names: list[str] | None = None,
    start: np.ndarray | None = None,
    missing: str = "listwise",
) -> float:
    """omega total from one ML factor with signed loadings, oriented to sum >= 0; uniquenesses
    bounded to [.005, 1] as R psych's ``fa`` and ``factanal`` (no Heywood case). ``start``:
    uniquenesses to start from (a bootstrap starts from the full sample's)."""
    r = _corr(x, names, missing)
    if x.shape[1] < 3:
        raise Undefined("omega needs 3+ items (a one-factor model of 2 items is not identified)")
    psi = one_factor_uniquenesses(r, start)
    return 1.0 - float(psi.sum()) / float(r.sum())


def one_factor_uniquenesses(r: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """The standardized uniquenesses of the one-factor ML fit to the correlations ``r``:
    ``factanal``'s concentrated likelihood over the uniquenesses psi (the loadings of a given
    psi are the leading eigenvector of psi^-1/2 R psi^-1/2; Joreskog 1967), L-BFGS-B on
    [.005, 1] with the analytic gradient."""
    k = len(r)
    if start is None:  # factanal's start: (1 - 0.5 / k) / diag(R^-1)
        start = (1.0 - 0.5 / k) / np.diag(np.linalg.inv(r))
    start = np.clip(start, 0.005, 1.0)

    def loadings(psi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sc = 1.0 / np.sqrt(psi)
        e, v = np.linalg.eigh(r * np.outer(sc, sc))
        return e, np.sqrt(psi) * v[:, -1] * np.sqrt(max(e[-1] - 1.0, 0.0))

    def fun(psi: np.ndarray) -> tuple[float, np.ndarray]:
        e, lam = loadings(psi)
        rest = e[:-1]
        if rest.min() <= 0:
            return np.inf, np.zeros(k)
        grad = (lam**2 + psi - np.diag(r)) / psi**2
        return float(np.sum(rest - np.log(rest))), grad

    res = minimize(fun, start, jac=True, method="L-BFGS-B", bounds=[(0.005, 1.0)] * k)
    if not res.success:
        raise Undefined(f"the one-factor model did not converge ({res.message})")
    _, lam = loadings(res.x)
    lam = lam / np.sqrt(lam**2 + res.x)
    return 1.0 - lam**2


def _stat(fn: Callable[[np.ndarray], float], x: np.ndarray) -> float | None:
    try:
        value = fn(x)
    except (Undefined, np.linalg.LinAlgError):
        return None
    return value if np.isfinite(value) else None


def _percentile(draws: list[float | None]) -> tuple[float, float] | None:
    ok = np.array([d for d in draws if d is not None])
    if len(ok) < 0.9 * len(draws) or len(ok) < 20:
        return None
    lo, hi = np.percentile(ok, [2.5, 97.5])
    return (float(lo), float(hi))


Batch = Callable[[Sequence[np.ndarray]], list[float | None]]


def _bootstrap(
    fn: Callable[[np.ndarray], float],
    x: np.ndarray,
    clusters: np.ndarray | None,
    n_boot: int,
    seed: int,
    batch: Batch | None = None,
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    with one_blas_thread():
        return _draws(fn, x, clusters, n_boot, seed, batch)


def _draws(
    fn: Callable[[np.ndarray], float],
    x: np.ndarray,
    clusters: np.ndarray | None,
    n_boot: int,
    seed: int,
    batch: Batch | None = None,
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """Naive then clustered draws (row indices, from one generator seeded ``seed``), ``fn`` on
    each (``batch``: all of a kind at once, the same values)."""
    rng = np.random.default_rng(seed)
    n = len(x)
    stats = batch or (lambda rows: [_stat(fn, x[idx]) for idx in rows])
    naive = stats([rng.integers(0, n, n) for _ in range(n_boot)])
    if clusters is None:
        return _percentile(naive), None
    ids, inverse = np.unique(clusters, return_inverse=True)
    rows = [np.flatnonzero(inverse == c) for c in range(len(ids))]
    picks = [rng.integers(0, len(ids), len(ids)) for _ in range(n_boot)]
    clustered = stats([np.concatenate([rows[c] for c in pick]) for pick in picks])
    return _percentile(naive), _percentile(clustered)


def scale_reliability(
    data: Responses,
    structure: ScaleStructure,
    n_boot: int = 500,
    seed: int = 0,
    missing: str = "listwise",
) -> list[ScaleReliability]:
    """alpha, lambda 6 and omega of every scale under ``missing``, with naive and clustered
    intervals (a bootstrap draw resamples the rows ``missing`` uses, gaps and all)."""
    structure.check(data.values)
    keyed = structure.keyed(data.values)
    out = []
    for name, items in structure.scales.items():
        frame = keyed.loc[:, list(items)]
        rows = rows_used(frame, missing)
        kept = usable(frame, missing)
        mask = frame.index.isin(kept.index)
        x = kept.to_numpy(dtype=float)
        clusters = None if data.cluster is None else data.cluster.to_numpy()[mask]
        n_cl = None if clusters is None else len(np.unique(clusters))
        rel = ScaleReliability(name, rows.n, len(items), n_cl, rows=rows)
        names = list(items)
        try:
            _check(x, names, rows.n)
        except Undefined as exc:
            rel.reason = str(exc)
            out.append(rel)
            continue
        start = _psi(x, missing)
        omega = partial(omega_total, names=names, start=start, missing=missing)
        fns: dict[str, Callable[[np.ndarray], float]] = {
            "alpha": partial(alpha, missing=missing),
            "lambda6": partial(lambda6, names=names, missing=missing),
            "omega_total": omega,
        }
        batches = {"omega_total": _omega_batch(x, start, omega, missing)}
        for cname, fn in fns.items():
            coef = _coefficient(cname, fn, x, clusters, n_boot, seed, batches.get(cname))
            rel.coefficients.append(coef)
        out.append(rel)
    return out


def _psi(x: np.ndarray, missing: str = "listwise") -> np.ndarray | None:
    """The full sample's uniquenesses, where defined (the bootstrap fits start from them)."""
    try:
        return one_factor_uniquenesses(_corr(x, None, missing))
    except (Undefined, np.linalg.LinAlgError, ValueError):
        return None


def _omega_batch(
    x: np.ndarray, start: np.ndarray | None, omega: Callable[[np.ndarray], float], missing: str
) -> Batch | None:
    """omega's draws fitted all at once (``omega_draws``) on complete rows; else None."""
    if missing != "listwise" or start is None:
        return None
    return omega_of_draws(x, start, partial(_stat, omega))


def _coefficient(
    name: str,
    fn: Callable[[np.ndarray], float],
    x: np.ndarray,
    clusters: np.ndarray | None,
    n_boot: int,
    seed: int,
    batch: Batch | None = None,
) -> Coefficient:
    try:
        value = fn(x)
    except (Undefined, np.linalg.LinAlgError) as exc:
        return Coefficient(name, None, reason=str(exc))
    if n_boot <= 0:
        return Coefficient(name, value)
    if clusters is not None and len(np.unique(clusters)) == len(clusters):
        naive, _ = _bootstrap(fn, x, None, n_boot, seed, batch)
        return Coefficient(name, value, naive, None, "one respondent per persona: no clustering")
    naive, clustered = _bootstrap(fn, x, clusters, n_boot, seed, batch)
    return Coefficient(name, value, naive, clustered)
