"""omega of many bootstrap draws at once (``analysis.population.omega_draws``): each draw's
value is that of its own one-factor ML fit, checked against scipy's L-BFGS-B run draw by draw
to a tight tolerance (the reference), and the draws the batch cannot settle (a constant
item here) go to the draw-by-draw statistic."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from scipy.optimize import minimize

from psymetrics_core.analysis.population.omega_draws import omega_of_draws
from psymetrics_core.analysis.population.reliability import (
    _draws,
    _psi,
    _stat,
    omega_total,
)


def _one_factor(n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    f = rng.normal(size=(n, 1))
    return np.round(np.clip(3 + f @ rng.uniform(0.4, 1.2, (1, k)) + rng.normal(size=(n, k)), 1, 5))


def _reference_omega(x: np.ndarray) -> float:
    """factanal's concentrated likelihood minimised by L-BFGS-B at a tight tolerance (numerical
    gradient, from psi = .5), then omega = 1 - sum(psi_std) / sum(R)."""
    r = np.corrcoef(x.T)

    def fun(psi: np.ndarray) -> float:
        sc = 1.0 / np.sqrt(psi)
        rest = np.linalg.eigvalsh(r * np.outer(sc, sc))[:-1]
        return float(np.sum(rest - np.log(rest)))

    k = len(r)
    opts = {"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000}
    psi = minimize(fun, np.full(k, 0.5), method="L-BFGS-B", bounds=[(0.005, 1)] * k, options=opts).x
    sc = 1.0 / np.sqrt(psi)
    e, v = np.linalg.eigh(r * np.outer(sc, sc))
    lam = np.sqrt(psi) * v[:, -1] * np.sqrt(e[-1] - 1.0)
    std = lam / np.sqrt(lam**2 + psi)
    return 1.0 - float(np.sum(1.0 - std**2)) / float(r.sum())


def test_each_draw_is_its_own_ml_fit() -> None:
    x = _one_factor(150, 5, seed=4)
    start = _psi(x)
    rng = np.random.default_rng(0)
    rows = [rng.integers(0, len(x), len(x)) for _ in range(40)]
    fell_back: list[int] = []

    def one(z: np.ndarray) -> float | None:
        fell_back.append(1)
        return _stat(partial(omega_total, start=start), z)

    got = omega_of_draws(x, start, one)(rows)
    assert len(fell_back) < 4  # interior fits: the batch settles (almost) every draw
    ref = [_reference_omega(x[idx]) for idx in rows]
    assert got == pytest.approx(ref, abs=1e-6)


def test_the_interval_is_the_draw_by_draw_one_to_printed_precision() -> None:
    x = _one_factor(120, 6, seed=7)
    start = _psi(x)
    fn = partial(omega_total, start=start)
    clusters = np.repeat(np.arange(60), 2)
    alone = _draws(fn, x, clusters, 200, 0)
    batch = _draws(fn, x, clusters, 200, 0, omega_of_draws(x, start, partial(_stat, fn)))
    for a, b in zip(alone, batch, strict=True):
        assert a is not None and b is not None
        assert np.round(a, 3).tolist() == np.round(b, 3).tolist()


def test_undefined_draws_go_draw_by_draw() -> None:
    x = _one_factor(60, 4, seed=1)
    x[:30, 0] = 3.0  # a draw of the first 30 rows has a constant item: no omega there
    start = _psi(x)
    seen: list[np.ndarray] = []

    def one(z: np.ndarray) -> float | None:
        seen.append(z)
        return _stat(partial(omega_total, start=start), z)

    rows = [np.arange(30), np.arange(60)]
    got = omega_of_draws(x, start, one)(rows)
    assert got[0] is None and len(seen) >= 1 and seen[0].shape == (30, 4)
    assert got[1] == pytest.approx(omega_total(x, start=start), abs=1e-6)
