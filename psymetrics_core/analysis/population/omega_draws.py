"""omega total of many bootstrap draws at once (complete rows: ``--missing listwise``).

Each draw's one-factor ML fit (``reliability.one_factor_uniquenesses``: factanal's
concentrated likelihood over the uniquenesses psi; Joreskog 1967) is the same problem on a
different correlation matrix, so all draws are solved together: the draws' correlations from
their row counts, then Newton steps on every draw at once (batched eigendecompositions; the
analytic gradient, its Jacobian by central differences), started from the full sample's
uniquenesses. A draw whose fit does not settle strictly inside the bounds [.005, 1] with a
vanishing gradient (a Heywood case, a bad start) is fitted alone by L-BFGS-B, as before; a draw
whose correlations look singular or whose item looks constant goes that way too (None where
it is, as before).
The Newton fits stop at a gradient (1e-10) 1e5 times smaller than L-BFGS-B's default stop
(1e-5), so a draw's omega differs from the draw-by-draw fit's by that fit's own slack (about
1e-7) and the intervals are the same to printed precision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["omega_of_draws"]

LOW, HIGH = 0.005, 1.0
_STEPS = 25
_H = 1e-6


def _grad(r: np.ndarray, psi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per draw: the gradient of the concentrated likelihood at ``psi`` (B, k), the loadings
    and the eigenvalues of psi^-1/2 R psi^-1/2 (ascending)."""
    sc = 1.0 / np.sqrt(psi)
    e, v = np.linalg.eigh(r * sc[:, :, None] * sc[:, None, :])
    lam = np.sqrt(psi) * v[:, :, -1] * np.sqrt(np.maximum(e[:, -1] - 1.0, 0.0))[:, None]
    diag = np.diagonal(r, axis1=1, axis2=2)
    return (lam**2 + psi - diag) / psi**2, lam, e


def _newton(r: np.ndarray, psi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton steps on every draw of ``r`` (B, k, k) from ``psi`` (B, k): the uniquenesses
    and whether each draw settled (inside the bounds, gradient below 1e-10)."""
    b, k = psi.shape
    eye = np.eye(k) * _H
    ok = np.ones(b, dtype=bool)
    for _ in range(_STEPS):
        g, _, _ = _grad(r, psi)
        if np.all(np.abs(g).max(axis=1)[ok] < 1e-10):
            break
        cols = [
            (_grad(r, psi + eye[j])[0] - _grad(r, psi - eye[j])[0]) / (2 * _H) for j in range(k)
        ]
        hess = np.stack(cols, axis=2)
        hess = 0.5 * (hess + np.swapaxes(hess, 1, 2))
        good = np.linalg.eigvalsh(hess).min(axis=1) > 0
        ok &= good
        step = np.zeros_like(psi)
        step[ok] = np.linalg.solve(hess[ok], g[ok][:, :, None])[:, :, 0]
        psi = psi - step
        ok &= np.all((psi > LOW + _H) & (psi < HIGH - _H), axis=1)
        psi = np.clip(psi, LOW + _H, HIGH - _H)
    g, lam, e = _grad(r, psi)
    ok &= (np.abs(g).max(axis=1) < 1e-10) & (e[:, :-1].min(axis=1) > 0)
    return psi, ok


def _correlations(x: np.ndarray, rows: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The draws' item correlations (B, k, k) from their row counts, and which are defined
    (every item varies, no near-singular direction: as ``reliability._corr``)."""
    counts = np.stack([np.bincount(idx, minlength=len(x)) for idx in rows]).astype(float)
    m = counts.sum(axis=1)
    mean = counts @ x / m[:, None]
    cross = np.einsum("bn,ni,nj->bij", counts, x, x)
    cov = (cross - m[:, None, None] * mean[:, :, None] * mean[:, None, :]) / (m - 1)[:, None, None]
    var = np.diagonal(cov, axis1=1, axis2=2)
    defined = np.all(var > 1e-12 * np.maximum(np.var(x, axis=0), 1e-300), axis=1)
    sd = np.sqrt(np.where(var > 0, var, 1.0))
    r = cov / sd[:, :, None] / sd[:, None, :]
    defined &= np.linalg.eigvalsh(r).min(axis=1) >= 1e-8
    return r, defined


def omega_of_draws(
    x: np.ndarray,
    start: np.ndarray | None,
    one: Callable[[np.ndarray], float | None],
) -> Callable[[Sequence[np.ndarray]], list[float | None]]:
    """The draws' omegas of the complete rows ``x``: a function of the draws' row indices.
    ``start``: the full sample's uniquenesses; ``one``: the draw-by-draw statistic, for the
    draws the batch leaves (and for all of them without ``start``)."""

    def draws(rows: Sequence[np.ndarray]) -> list[float | None]:
        if start is None or not rows:
            return [one(x[idx]) for idx in rows]
        r, defined = _correlations(x, rows)
        psi0 = np.broadcast_to(np.clip(start, LOW + _H, HIGH - _H), (len(rows), len(start)))
        psi, ok = _newton(r[defined], psi0[defined].copy())
        _, lam, _ = _grad(r[defined], psi)
        std = lam / np.sqrt(lam**2 + psi)
        omega = 1.0 - (1.0 - std**2).sum(axis=1) / r[defined].sum(axis=(1, 2))
        out = [one(x[idx]) if not d else None for idx, d in zip(rows, defined, strict=True)]
        for j, b in enumerate(np.flatnonzero(defined)):
            out[b] = float(omega[j]) if ok[j] and np.isfinite(omega[j]) else one(x[rows[int(b)]])
        return out

    return draws
