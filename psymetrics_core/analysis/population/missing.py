"""One missing-data policy for every population analysis (``--missing listwise|pairwise|fiml``).

- ``listwise``: the rows that answered every item of the analysis (the default: every analysis
  then rests on rows a reader can count, as R's ``na.omit``).
- ``pairwise``: each covariance or correlation from the rows that answered both items (R's
  ``use = "pairwise"``, psych's default); the n of a pairwise analysis is its smallest pair
  count (the conservative choice for tests and random-data references), the largest is kept
  beside it. A pairwise matrix need not be positive definite: an analysis then says so.
- ``fiml``: full-information maximum likelihood under MAR: every answered cell enters the
  likelihood (semopy's ``ModelMeans`` FIML objective for CFA; the EM estimate of the saturated
  model's means and covariances, Dempster, Laird & Rubin 1977, for its chi-square and for
  reliability as Enders (2003) proposes). Analyses with no full-information form refuse with one
  line naming the analysis.

:class:`RowsUsed` is what every analysis records: the policy, the n it used, the rows given and
why rows were left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "POLICIES",
    "RowsUsed",
    "rows_used",
    "usable",
    "pairwise_cov",
    "pairwise_corr",
    "em_moments",
    "fiml_loss",
    "fiml_refusal",
]

POLICIES = ("listwise", "pairwise", "fiml")


@dataclass(frozen=True)
class RowsUsed:
    """The rows an analysis used: ``n`` (pairwise: the smallest pair count, ``n_max`` the
    largest) of ``of`` rows given, under ``policy``; ``dropped``: why rows were left out."""

    policy: str
    n: int
    of: int
    n_max: int | None = None
    dropped: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "missing": self.policy,
            "n": self.n,
            "of": self.of,
            "n_pairs_max": self.n_max,
            "dropped": self.dropped,
        }

    def text(self) -> str:
        """``n 2436 of 2800 (listwise: 364 rows with an unanswered item left out)``."""
        n = f"{self.n}" if self.n_max is None or self.n_max == self.n else f"{self.n}-{self.n_max}"
        pairs = " per pair" if self.policy == "pairwise" else ""
        why = f": {self.dropped}" if self.dropped else ""
        return f"n {n}{pairs} of {self.of} ({self.policy}{why})"


def _rows(k: int) -> str:
    return f"{k} row{'' if k == 1 else 's'}"


def rows_used(frame: pd.DataFrame, policy: str) -> RowsUsed:
    """What ``policy`` keeps of ``frame`` (rows x the analysis's items)."""
    obs = frame.notna().to_numpy()
    given = len(frame)
    if policy == "listwise":
        n = int(obs.all(axis=1).sum())
        why = f"{_rows(given - n)} with an unanswered item left out" if n < given else None
        return RowsUsed(policy, n, given, None, why)
    empty = int((~obs.any(axis=1)).sum())
    why = f"{_rows(empty)} with no answer left out" if empty else None
    if policy == "pairwise":
        counts = obs.T.astype(int) @ obs.astype(int)
        lo = int(counts.min()) if counts.size else 0
        return RowsUsed(policy, lo, given, int(counts.max()) if counts.size else 0, why)
    return RowsUsed(policy, given - empty, given, None, why)


def usable(frame: pd.DataFrame, policy: str) -> pd.DataFrame:
    """The rows ``policy`` uses: complete rows (listwise), else rows with any answer."""
    if policy == "listwise":
        return frame.dropna(axis=0, how="any")
    return frame.dropna(axis=0, how="all")


def pairwise_cov(frame: pd.DataFrame, ddof: int = 1) -> np.ndarray:
    """Each covariance from the rows that answered both items (``ddof`` per pair)."""
    x = frame.to_numpy(dtype=float)
    if not np.isnan(x).any():
        return np.atleast_2d(np.cov(x.T, ddof=ddof))
    obs = (~np.isnan(x)).astype(float)
    counts = obs.T @ obs
    cov = frame.cov(min_periods=2).to_numpy(dtype=float)  # ddof 1 per pair
    if ddof == 0:
        cov = cov * (counts - 1) / np.where(counts > 0, counts, 1)
    return cov


def pairwise_corr(frame: pd.DataFrame) -> np.ndarray:
    """Each correlation from the rows that answered both items (psych's ``use="pairwise"``)."""
    x = frame.to_numpy(dtype=float)
    if not np.isnan(x).any():
        return np.atleast_2d(np.corrcoef(x.T))
    return frame.corr(min_periods=2).to_numpy(dtype=float)


def _patterns(x: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observed-item mask, row indices) per missing-data pattern (rows with no answer left
    out)."""
    obs = ~np.isnan(x)
    codes = obs.astype(np.int64) @ (np.int64(1) << np.arange(x.shape[1], dtype=np.int64))
    keys, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    out = []
    for i, row in enumerate(first):
        if obs[row].any():
            out.append((obs[row], np.flatnonzero(inverse == i)))
    return out


def em_moments(
    x: np.ndarray, max_iter: int = 1000, tol: float = 1e-9
) -> tuple[np.ndarray, np.ndarray]:
    """The ML means and covariances (N divisor) of a multivariate normal from data with
    missing cells (rows with no answer ignored): the EM algorithm (Dempster, Laird & Rubin
    1977; Little & Rubin 2002, ch. 11)."""
    x = x[~np.isnan(x).all(axis=1)]
    n, p = x.shape
    pats = _patterns(x)
    blocks = [
        (o, x[np.ix_(rows, o)], np.ix_(~o, o), np.ix_(o, o), np.ix_(~o, ~o), np.ix_(o, ~o))
        for o, rows in pats
    ]
    mu = np.nanmean(x, axis=0)
    sig = np.diag(np.nanvar(x, axis=0))
    done_rows = [b for b in blocks if b[0].all()]  # complete rows: their sums never change
    c1 = sum((b[1].sum(axis=0) for b in done_rows), np.zeros(p))
    c2 = sum((b[1].T @ b[1] for b in done_rows), np.zeros((p, p)))
    blocks = [b for b in blocks if not b[0].all()]
    for _ in range(max_iter):
        t1, t2 = c1.copy(), c2.copy()
        for o, xo, mo, oo, mm, om in blocks:
            full = np.empty((len(xo), p))
            full[:, o] = xo
            b = sig[mo] @ np.linalg.inv(sig[oo])
            full[:, ~o] = mu[~o] + (xo - mu[o]) @ b.T
            t2[mm] += len(xo) * (sig[mm] - b @ sig[om])
            t1 += full.sum(axis=0)
            t2 += full.T @ full
        new_mu = t1 / n
        new_sig = t2 / n - np.outer(new_mu, new_mu)
        done = max(np.abs(new_mu - mu).max(), np.abs(new_sig - sig).max()) < tol
        mu, sig = new_mu, new_sig
        if done:
            break
    return mu, sig


def fiml_loss(x: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> float:
    """-2 log-likelihood (less its constant) of the observed cells of ``x`` under
    N(``mu``, ``sigma``): sum over rows of (x_o - mu_o)' Sigma_oo^-1 (x_o - mu_o) +
    log|Sigma_oo| (semopy's FIML objective, so differences of it are chi-squares)."""
    total = 0.0
    for o, rows in _patterns(x):
        s = sigma[np.ix_(o, o)]
        d = x[np.ix_(rows, o)] - mu[o]
        sign, logdet = np.linalg.slogdet(s)
        if sign <= 0:
            return float("inf")
        total += float(np.sum((d @ np.linalg.inv(s)) * d)) + len(rows) * logdet
    return total


def fiml_refusal(analysis: str, why: str) -> str:
    """The one line of an analysis that has no full-information form."""
    return (
        f"--missing fiml: {analysis} has no full-information estimator here ({why}); "
        "use --missing listwise or pairwise"
    )
