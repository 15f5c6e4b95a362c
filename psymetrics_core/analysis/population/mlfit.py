"""A small maximum-likelihood engine for (multi-group) confirmatory factor models.

semopy fits one group at a time and has no cross-group equality constraints (its
``multigroup`` fits each group separately), so the invariance ladder needs its own engine.
The model is lavaan's: per group g, Sigma_g = Lambda Phi_g Lambda' + Theta_g and
mu_g = nu + Lambda kappa_g; the ML discrepancy is lavaan's (sample covariances with the N
divisor; chi-square = sum over groups of N_g F_g, not N - 1). Identification is by a marker
indicator (first loading of each factor fixed to 1, lavaan's default) or by unit factor
variances (``std_lv``). Analytic gradients; scipy's L-BFGS-B.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from scipy.optimize import minimize

try:
    from threadpoolctl import ThreadpoolController  # comes with scikit-learn (semopy's)
except ImportError:  # pragma: no cover
    ThreadpoolController = None  # type: ignore[assignment,misc]

__all__ = ["GroupMoments", "Pattern", "MLFit", "fit_ml", "LEVELS", "one_blas_thread"]

LEVELS = ("configural", "metric", "scalar")


@dataclass(frozen=True)
class GroupMoments:
    """One group's sample moments: covariance with the N divisor, means and size."""

    cov: np.ndarray
    mean: np.ndarray
    n: int


@dataclass(frozen=True)
class Pattern:
    """Which item loads on which factor (simple or not): ``loads[f]`` = item indices."""

    n_items: int
    loads: tuple[tuple[int, ...], ...]

    @property
    def n_factors(self) -> int:
        return len(self.loads)


@dataclass
class MLFit:
    """The result of :func:`fit_ml`: parameters per group, chi-square, df and convergence."""

    converged: bool
    message: str
    chisq: float
    df: int
    n_free: int
    lam: list[np.ndarray] = field(default_factory=list)
    phi: list[np.ndarray] = field(default_factory=list)
    theta: list[np.ndarray] = field(default_factory=list)
    nu: list[np.ndarray] = field(default_factory=list)
    kappa: list[np.ndarray] = field(default_factory=list)
    sigma: list[np.ndarray] = field(default_factory=list)
    mu: list[np.ndarray] = field(default_factory=list)


@dataclass
class _Layout:
    """Where each free parameter sits: index arrays per group (-1 = fixed)."""

    lam: list[np.ndarray]
    lam_fixed: np.ndarray
    phi: list[np.ndarray]
    theta: list[np.ndarray]
    nu: list[np.ndarray]
    kappa: list[np.ndarray]
    n_free: int


def _layout(pat: Pattern, n_groups: int, level: str, means: bool, std_lv: bool) -> _Layout:
    p, k = pat.n_items, pat.n_factors
    count = [0]

    def new(shape: tuple[int, ...]) -> np.ndarray:
        size = int(np.prod(shape))
        out = np.arange(count[0], count[0] + size).reshape(shape)
        count[0] += size
        return out

    lam_fixed = np.zeros((p, k))
    base = np.full((p, k), -1)
    for f, items in enumerate(pat.loads):
        for pos, j in enumerate(items):
            if pos == 0 and not std_lv:
                lam_fixed[j, f] = 1.0
            else:
                base[j, f] = 0
    lams, phis, thetas, nus, kappas = [], [], [], [], []
    shared_lam = shared_nu = None
    for g in range(n_groups):
        if shared_lam is None or level == "configural":
            shared_lam = base.copy()
            shared_lam[base >= 0] = new((int((base >= 0).sum()),))
        lams.append(shared_lam)
        phi = np.full((k, k), -1)
        tri = np.tril_indices(k, -1 if std_lv else 0)
        phi[tri] = new((len(tri[0]),))
        phi = np.where(phi >= 0, phi, phi.T)
        phis.append(phi)
        thetas.append(new((p,)))
        if means and (shared_nu is None or level != "scalar"):
            shared_nu = new((p,))
        nus.append(shared_nu if means and shared_nu is not None else np.full(p, -1))
        free_kappa = means and level == "scalar" and g > 0
        kappas.append(new((k,)) if free_kappa else np.full(k, -1))
    return _Layout(lams, lam_fixed, phis, thetas, nus, kappas, count[0])


def _matrices(x: np.ndarray, lay: _Layout, g: int, std_lv: bool) -> tuple[np.ndarray, ...]:
    li = lay.lam[g]
    lam = np.where(li >= 0, x[np.maximum(li, 0)], lay.lam_fixed)
    pi = lay.phi[g]
    phi = np.where(pi >= 0, x[np.maximum(pi, 0)], 1.0 if std_lv else 0.0)
    theta = x[lay.theta[g]]
    nu = np.where(lay.nu[g] >= 0, x[np.maximum(lay.nu[g], 0)], 0.0)
    kappa = np.where(lay.kappa[g] >= 0, x[np.maximum(lay.kappa[g], 0)], 0.0)
    return lam, phi, theta, nu, kappa


def _objective(
    x: np.ndarray, lay: _Layout, groups: list[GroupMoments], means: bool, std_lv: bool
) -> tuple[float, np.ndarray]:
    """lavaan's F_ML = sum_g (N_g/N) [log|Sigma| + tr(S Sigma^-1) - log|S| - p + d'Sigma^-1 d]."""
    total_n = sum(gm.n for gm in groups)
    f_total, grad = 0.0, np.zeros_like(x)
    for g, gm in enumerate(groups):
        lam, phi, theta, nu, kappa = _matrices(x, lay, g, std_lv)
        sigma = lam @ phi @ lam.T + np.diag(theta)
        sign, logdet = np.linalg.slogdet(sigma)
        if sign <= 0:
            return 1e10, np.zeros_like(x)
        inv = np.linalg.inv(sigma)
        d = gm.mean - (nu + lam @ kappa) if means else np.zeros(len(theta))
        w = gm.cov + np.outer(d, d)
        _, logdet_s = np.linalg.slogdet(gm.cov)
        f = logdet + float(np.sum(inv * w)) - logdet_s - len(theta)
        weight = gm.n / total_n
        f_total += weight * f
        gsig = inv - inv @ w @ inv
        dmu = -2.0 * inv @ d
        dlam = 2.0 * gsig @ lam @ phi + (np.outer(dmu, kappa) if means else 0.0)
        dphi = lam.T @ gsig @ lam
        dphi = 2.0 * dphi - np.diag(np.diag(dphi))
        _scatter(grad, lay.lam[g], weight * dlam)
        _scatter(grad, np.tril(lay.phi[g] + 1) - 1, weight * dphi)
        _scatter(grad, lay.theta[g], weight * np.diag(gsig))
        if means:
            _scatter(grad, lay.nu[g], weight * dmu)
            _scatter(grad, lay.kappa[g], weight * (lam.T @ dmu))
    return f_total, grad


def _scatter(grad: np.ndarray, idx: np.ndarray, values: np.ndarray) -> None:
    mask = idx >= 0
    np.add.at(grad, idx[mask], values[mask])


def _start(pat: Pattern, lay: _Layout, groups: list[GroupMoments], std_lv: bool) -> np.ndarray:
    """Start values: marker-based loadings, half of each variance unique, sample means."""
    x = np.zeros(lay.n_free)
    for g, gm in enumerate(groups):
        s = gm.cov
        for f, items in enumerate(pat.loads):
            a = items[0]
            var_f = max(0.5 * s[a, a], 1e-3)
            if lay.phi[g][f, f] >= 0:
                x[lay.phi[g][f, f]] = var_f
            scale = np.sqrt(var_f) if std_lv else var_f
            for j in items:
                if lay.lam[g][j, f] >= 0:
                    x[lay.lam[g][j, f]] = s[j, a] / scale if j != a else np.sqrt(var_f)
        x[lay.theta[g]] = np.maximum(0.5 * np.diag(s), 1e-3)
        if (lay.nu[g] >= 0).any():
            x[lay.nu[g]] = gm.mean
    return x


@cache
def _controller() -> object | None:
    if ThreadpoolController is None:  # pragma: no cover - without it BLAS keeps its threads
        return None
    return ThreadpoolController()  # scans the loaded libraries once (~5 ms)


def one_blas_thread() -> AbstractContextManager[object]:
    """BLAS on one thread: these matrices are small, and threads only contend (on a loaded
    2-core machine a 5-item omega fit took 200 ms with OpenBLAS threads, 10 ms without)."""
    ctl = _controller()
    return nullcontext() if ctl is None else ctl.limit(limits=1)  # type: ignore[attr-defined]


def fit_ml(
    pat: Pattern,
    groups: list[GroupMoments],
    level: str = "configural",
    means: bool = False,
    std_lv: bool = False,
    min_unique: float | None = None,
) -> MLFit:
    """Fit the factor model by ML; ``level`` sets which parameters are shared by the groups.

    Residual variances are free (negative = a Heywood case, as lavaan) unless ``min_unique``
    bounds them below at that share of each item's variance (as R psych's ``fa``, .005).
    """
    lay = _layout(pat, len(groups), level, means, std_lv)
    x0 = _start(pat, lay, groups, std_lv)
    bounds = None
    if min_unique is not None:
        bounds = [(None, None)] * lay.n_free
        for g, gm in enumerate(groups):
            for j, idx in enumerate(lay.theta[g]):
                bounds[idx] = (min_unique * gm.cov[j, j], None)
    with one_blas_thread():
        res = minimize(
            _objective,
            x0,
            args=(lay, groups, means, std_lv),
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": 5000, "maxfun": 10000, "ftol": 1e-13, "gtol": 1e-8},
        )
    p = pat.n_items
    moments = len(groups) * (p * (p + 1) // 2 + (p if means else 0))
    total_n = sum(gm.n for gm in groups)
    grad_ok = bool(np.max(np.abs(res.jac)) < 1e-4) if res.jac is not None else False
    converged = bool(np.isfinite(res.fun) and res.fun < 1e9 and (res.success or grad_ok))
    out = MLFit(
        converged, str(res.message), float(res.fun) * total_n, moments - lay.n_free, lay.n_free
    )
    for g in range(len(groups)):
        lam, phi, theta, nu, kappa = _matrices(res.x, lay, g, std_lv)
        out.lam.append(lam)
        out.phi.append(phi)
        out.theta.append(theta)
        out.nu.append(nu)
        out.kappa.append(kappa)
        out.sigma.append(lam @ phi @ lam.T + np.diag(theta))
        out.mu.append(nu + lam @ kappa)
    return out
