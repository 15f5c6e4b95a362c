"""Dimensionality: Horn's parallel analysis, EFA with a named rotation, Tucker's congruence.

Parallel analysis compares the eigenvalues of the item correlations with those of random
normal data of the same size (``n_iter`` draws); factors are retained while the observed
eigenvalue exceeds the random ``quantile`` (.95: Glorfeld's variant; .5 ~ Horn's mean).
EFA is statsmodels' (ML or principal axis; its rotations, varimax, quartimax and oblimin
verified by statsmodels against R/Stata). factor_analyzer 0.5.1 fails with scikit-learn >= 1.8
(``check_array(force_all_finite=...)`` removed), so it is not used. Tucker's congruence
phi = sum(x y) / sqrt(sum x^2 sum y^2) per factor, after matching the EFA factors to the
human ones one to one (the assignment and signs maximising the summed |phi|, over min(k)
factors), read as Lorenzo-Seva & ten Berge (2006) do.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from psymetrics_core.analysis.population.fitstats import constant_items, dependent_items
from psymetrics_core.base.errors import PsymError

__all__ = [
    "ParallelAnalysis",
    "EFAResult",
    "ROTATIONS",
    "parallel_analysis",
    "efa",
    "efa_parameters",
    "tucker_congruence",
    "Congruence",
    "match_congruence",
    "congruence_reading",
]


@dataclass(frozen=True)
class ParallelAnalysis:
    """Observed and random eigenvalues, and the number of factors retained."""

    n_factors: int | None
    observed: tuple[float, ...]
    random_quantile: tuple[float, ...]
    quantile: float
    reason: str | None = None


@dataclass(frozen=True)
class EFAResult:
    """Rotated loadings (items x factors), factor correlations for oblique rotations."""

    loadings: pd.DataFrame | None
    rotation: str | None
    method: str
    factor_corr: np.ndarray | None = None
    reason: str | None = None
    heywood: tuple[str, ...] = ()


HEYWOOD_UNIQUENESS = 0.001  # an item's uniqueness at or below this: a boundary (Heywood) case


def _complete(values: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    frame = values.dropna(axis=0, how="any")
    const = constant_items(frame)
    if const:
        return frame, f"items that never vary: {', '.join(const)}"
    if len(frame) <= frame.shape[1]:
        return frame, f"{len(frame)} complete respondents for {frame.shape[1]} items"
    dep = dependent_items(np.cov(frame.to_numpy().T), list(frame.columns))
    if dep is not None:
        return frame, f"correlation matrix singular; dependent items: {', '.join(dep)}"
    return frame, None


def parallel_analysis(
    values: pd.DataFrame, n_iter: int = 100, quantile: float = 0.95, seed: int = 0
) -> ParallelAnalysis:
    """Horn's parallel analysis on the principal components of the item correlations."""
    frame, why = _complete(values)
    if why:
        return ParallelAnalysis(None, (), (), quantile, why)
    n, p = frame.shape
    obs = np.sort(np.linalg.eigvalsh(np.corrcoef(frame.to_numpy(dtype=float).T)))[::-1]
    rng = np.random.default_rng(seed)
    draws = np.empty((n_iter, p))
    for i in range(n_iter):
        z = rng.standard_normal((n, p))
        draws[i] = np.sort(np.linalg.eigvalsh(np.corrcoef(z.T)))[::-1]
    ref = np.quantile(draws, quantile, axis=0)
    keep = 0
    while keep < p and obs[keep] > ref[keep]:
        keep += 1
    return ParallelAnalysis(keep, tuple(map(float, obs)), tuple(map(float, ref)), quantile)


ROTATIONS = ("varimax", "quartimax", "biquartimax", "equamax", "oblimin", "parsimax",
             "parsimony", "biquartimin", "promax")  # statsmodels' list  # fmt: skip


def efa_df(p: int, k: int) -> int:
    """Degrees of freedom of a k-factor EFA of p items: ((p - k)^2 - (p + k)) / 2."""
    return ((p - k) ** 2 - (p + k)) // 2


def efa_parameters(p: int, k: int) -> int:
    """Free parameters of a k-factor EFA of p items: loadings and uniquenesses less the
    k(k - 1)/2 fixed by the rotational indeterminacy (p k + p - k(k - 1)/2)."""
    return p * k + p - k * (k - 1) // 2


def efa(
    values: pd.DataFrame, n_factors: int, rotation: str | None = "oblimin", method: str = "ml"
) -> EFAResult:
    """statsmodels' EFA (``method`` ml or pa) with the named rotation (None: unrotated)."""
    from statsmodels.multivariate.factor import Factor  # on demand: the [analysis] extra

    if rotation is not None and rotation not in ROTATIONS:
        raise PsymError(f"EFA rotation {rotation!r} unknown (one of: {', '.join(ROTATIONS)})")
    frame, why = _complete(values)
    if why is None and not 1 <= n_factors < frame.shape[1]:
        why = f"{n_factors} factors for {frame.shape[1]} items"
    if why is None and len(frame) < (par := efa_parameters(frame.shape[1], n_factors)):
        need = "an EFA needs a respondent per parameter, as the CFA and the graded response model"
        why = (
            f"{len(frame)} complete respondents for {par} free parameters "
            f"({frame.shape[1]} items, {n_factors} factors; {need})"
        )
    if why is None and (df := efa_df(frame.shape[1], n_factors)) < 0:
        why = (f"not identified: {n_factors} factors for {frame.shape[1]} items leave df {df} "
               "(an EFA needs (items - factors)^2 >= items + factors)")  # fmt: skip
    if why:
        return EFAResult(None, rotation, method, reason=why)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            corr = np.corrcoef(frame.to_numpy(dtype=float).T)
            res = Factor(corr=corr, n_factor=n_factors, method=method, nobs=len(frame)).fit(rng=0)
            if rotation is not None and n_factors > 1:
                res.rotate(rotation)
    except Exception as exc:  # noqa: BLE001 - a failed extraction is reported, not raised
        return EFAResult(None, rotation, method, reason=f"EFA failed: {exc}")
    lam = np.asarray(res.loadings)
    if not np.all(np.isfinite(lam)):
        return EFAResult(None, rotation, method, reason="EFA gave non-finite loadings")
    cols = [f"F{j + 1}" for j in range(n_factors)]
    # factor correlations Phi = T'T (GPArotation's convention: L = A (T')^-1; identity for an
    # orthogonal T); statsmodels' results have no attribute for them
    rot = getattr(res, "rotation_matrix", None)
    phi = None if rot is None else np.asarray(rot).T @ np.asarray(rot)
    uniq = np.asarray(getattr(res, "uniqueness", np.full(len(cols), np.nan)), dtype=float)
    heywood = tuple(
        f"{item}: uniqueness {u:.3f} (communality at or above 1)"
        for item, u in zip(frame.columns, uniq, strict=False) if u <= HEYWOOD_UNIQUENESS
    )  # fmt: skip
    return EFAResult(pd.DataFrame(lam, index=frame.columns, columns=cols), rotation, method,
                     None if phi is None else np.asarray(phi), heywood=heywood)  # fmt: skip


def _phi(a: np.ndarray, b: np.ndarray) -> float:
    den = float(np.sqrt(np.sum(a**2) * np.sum(b**2)))
    return float(np.sum(a * b)) / den if den > 0 else float("nan")


@dataclass(frozen=True)
class Congruence:
    """Tucker's phi per human factor after matching (None: left unmatched, when the EFA has
    fewer factors), and the EFA factor each human factor was matched to, with its sign."""

    phi: dict[str, float | None]
    match: dict[str, str | None]


def match_congruence(loadings: pd.DataFrame, human: pd.DataFrame) -> Congruence:
    """phi of each human factor with the EFA factor matched to it: the one-to-one matching
    (over min(k) factors) and signs that maximise the summed |phi|; items aligned by name
    (every human item must be in ``loadings``). ``match`` names the EFA factor, "-" prefixed
    when it was reflected."""
    missing = [i for i in human.index if i not in loadings.index]
    if missing:
        raise PsymError(f"congruence: human loadings name items not in the EFA: {missing}")
    a = loadings.loc[human.index].to_numpy(dtype=float)
    b = human.to_numpy(dtype=float)
    ka, kb = a.shape[1], b.shape[1]
    phi = np.array([[_phi(a[:, i], b[:, j]) for j in range(kb)] for i in range(ka)])
    # the assignment that maximises the summed |phi| (Hungarian algorithm: exact, and fast
    # where trying every permutation of 10+ factors is not); undefined phi counts as 0
    rows, cols = linear_sum_assignment(-np.nan_to_num(np.abs(phi)))
    best = tuple(zip(rows.tolist(), cols.tolist(), strict=True))
    out: dict[str, float | None] = {str(c): None for c in human.columns}
    match: dict[str, str | None] = {str(c): None for c in human.columns}
    for i, j in best:
        v = phi[i, j]
        out[str(human.columns[j])] = None if v != v else abs(float(v))
        match[str(human.columns[j])] = ("-" if v < 0 else "") + str(loadings.columns[i])
    return Congruence(out, match)


def tucker_congruence(loadings: pd.DataFrame, human: pd.DataFrame) -> dict[str, float]:
    """phi per human factor, matching factors by the permutation and signs that maximise the
    summed |phi| (items aligned by name; every human item must be in ``loadings``)."""
    if loadings.shape[1] < human.shape[1]:
        raise PsymError(f"congruence: {loadings.shape[1]} factors for {human.shape[1]} human "
                        "factors")  # fmt: skip
    res = match_congruence(loadings, human)
    return {k: float("nan") if v is None else v for k, v in res.phi.items()}


def congruence_reading(phi: float) -> str:
    """Lorenzo-Seva & ten Berge's (2006) reading of Tucker's phi: >= .95 the factors can be
    considered equal, .85-.95 fair similarity, below .85 not equal."""
    return "equal" if phi >= 0.95 else "fair similarity" if phi >= 0.85 else "not equal"
