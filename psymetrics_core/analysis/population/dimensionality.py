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
from psymetrics_core.analysis.population.missing import (
    RowsUsed,
    fiml_refusal,
    pairwise_corr,
    pairwise_cov,
    rows_used,
    usable,
)
from psymetrics_core.base.errors import PsymError

__all__ = [
    "ParallelAnalysis",
    "EFAResult",
    "PA_KINDS",
    "auto_basis",
    "parallel_text",
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
    """Observed and random eigenvalues, the number retained and the rows used. ``kind``:
    ``factors`` (eigenvalues of the reduced correlation matrix, one-factor minres communalities
    on the diagonal) or ``components`` (of the correlation matrix); ``margin``: the last
    retained eigenvalue less its random reference (None: none retained), ``miss``: the first
    eigenvalue not retained less its reference (None: all retained)."""

    n_factors: int | None
    observed: tuple[float, ...]
    random_quantile: tuple[float, ...]
    quantile: float
    reason: str | None = None
    kind: str = "factors"
    rows: RowsUsed | None = None
    margin: float | None = None
    miss: float | None = None


@dataclass(frozen=True)
class EFAResult:
    """Rotated loadings (items x factors), factor correlations for oblique rotations."""

    loadings: pd.DataFrame | None
    rotation: str | None
    method: str
    factor_corr: np.ndarray | None = None
    reason: str | None = None
    heywood: tuple[str, ...] = ()
    rows: RowsUsed | None = None


HEYWOOD_UNIQUENESS = 0.001  # an item's uniqueness at or below this: a boundary (Heywood) case
PA_KINDS = ("factors", "components")


@dataclass(frozen=True)
class _Corr:
    """The correlations an analysis rests on, the rows behind them, or why there are none."""

    corr: np.ndarray | None
    columns: list[str]
    rows: RowsUsed
    reason: str | None = None


def _correlations(values: pd.DataFrame, missing: str, analysis: str) -> _Corr:
    """The item correlations under ``missing`` (complete rows, or pairwise; FIML refused:
    these analyses start from a correlation matrix of a stated n)."""
    cols = [str(c) for c in values.columns]
    rows = rows_used(values, missing)
    if missing == "fiml":
        why = fiml_refusal(analysis, "it starts from a correlation matrix of a stated n")
        return _Corr(None, cols, rows, why)
    frame = usable(values, missing)
    const = constant_items(frame)
    if const:
        return _Corr(None, cols, rows, f"items that never vary: {', '.join(const)}")
    if rows.n <= frame.shape[1]:
        per = " (smallest pair count)" if missing == "pairwise" else ""
        kind = "complete" if missing == "listwise" else missing
        return _Corr(
            None, cols, rows, f"{rows.n} {kind} respondents{per} for {frame.shape[1]} items"
        )
    corr = pairwise_corr(frame)
    if not np.all(np.isfinite(corr)):
        return _Corr(None, cols, rows, "a pairwise correlation is undefined")
    dep = dependent_items(pairwise_cov(frame), cols)
    if dep is not None:
        return _Corr(
            None, cols, rows, f"correlation matrix singular; dependent items: {', '.join(dep)}"
        )
    if np.linalg.eigvalsh(corr).min() <= 0:
        return _Corr(None, cols, rows, "the pairwise correlation matrix is not positive definite")
    return _Corr(corr, cols, rows)


def minres_communalities(r: np.ndarray, max_iter: int = 500, tol: float = 1e-7) -> np.ndarray:
    """The communalities of one factor fitted by least squares to the off-diagonal
    correlations (minres = ULS; iterated principal axes from the squared multiple
    correlations converge to it), each kept at or below 1."""
    h = np.clip(1.0 - 1.0 / np.diag(np.linalg.inv(r)), 0.0, 1.0)
    reduced = r.copy()
    for _ in range(max_iter):
        np.fill_diagonal(reduced, h)
        e, v = np.linalg.eigh(reduced)
        new = np.minimum(max(e[-1], 0.0) * v[:, -1] ** 2, 1.0)
        if np.abs(new - h).max() < tol:
            return new
        h = new
    return h


def _eigen(r: np.ndarray, kind: str) -> np.ndarray:
    """Eigenvalues, largest first, of ``r`` (components) or of ``r`` with the communalities of
    a one-factor minres fit on its diagonal (factors, as psych's ``fa.parallel``)."""
    if kind == "factors":
        r = r.copy()
        np.fill_diagonal(r, minres_communalities(r))
    return np.sort(np.linalg.eigvalsh(r))[::-1]


def parallel_analysis(
    values: pd.DataFrame,
    n_iter: int = 100,
    quantile: float = 0.95,
    seed: int = 0,
    kind: str = "factors",
    missing: str = "listwise",
) -> ParallelAnalysis:
    """Horn's (1965) parallel analysis: eigenvalues of the item correlations (``kind``
    components) or of the reduced correlations (factors: one-factor minres communalities on
    the diagonal, as psych's ``fa.parallel`` default) against those of random normal data of
    the same n and items; retained while the observed eigenvalue exceeds the random ``quantile``."""
    if kind not in PA_KINDS:
        raise PsymError(f"parallel analysis: kind {kind!r} unknown (one of: {', '.join(PA_KINDS)})")
    c = _correlations(values, missing, "parallel analysis")
    if c.corr is None:
        return ParallelAnalysis(None, (), (), quantile, c.reason, kind, c.rows)
    n, p = c.rows.n, len(c.columns)
    obs = _eigen(c.corr, kind)
    rng = np.random.default_rng(seed)
    draws = np.empty((n_iter, p))
    for i in range(n_iter):
        draws[i] = _eigen(np.atleast_2d(np.corrcoef(rng.standard_normal((n, p)).T)), kind)
    ref = np.quantile(draws, quantile, axis=0)
    keep = 0
    while keep < p and obs[keep] > ref[keep]:
        keep += 1
    margin = float(obs[keep - 1] - ref[keep - 1]) if keep else None
    miss = float(obs[keep] - ref[keep]) if keep < p else None
    return ParallelAnalysis(
        keep,
        tuple(map(float, obs)),
        tuple(map(float, ref)),
        quantile,
        None,
        kind,
        c.rows,
        margin,
        miss,
    )


def auto_basis(pa: ParallelAnalysis) -> str:
    """How ``--efa auto`` chose its count: parallel analysis's kind, n and the margins of the
    last retained eigenvalue and of the first one left out over their random references."""
    last = (
        ""
        if pa.margin is None
        else (
            f"; eigenvalue {pa.n_factors} exceeds its random {pa.quantile:.0%} quantile by "
            f"{pa.margin:.3f}"
        )
    )
    nxt = (
        ""
        if pa.miss is None
        else (f", eigenvalue {(pa.n_factors or 0) + 1} falls short of its by {-pa.miss:.3f}")
    )
    return f"--efa auto: {pa.n_factors} from parallel analysis of {pa.kind}{last}{nxt}"


def parallel_text(pa: ParallelAnalysis) -> list[str]:
    """Parallel analysis: what it counted, how many, the margins and the rows it used."""
    what = f"  parallel analysis ({pa.kind})"
    used = "" if pa.rows is None else f"; {pa.rows.text()}"
    if pa.reason:
        return [f"{what}: undefined ({pa.reason}){used}"]
    unit = "factor(s)" if pa.kind == "factors" else "component(s)"
    last = "" if pa.margin is None else f", the last by {pa.margin:.3f}"
    nxt = "" if pa.miss is None else f"; the next falls short by {-pa.miss:.3f}"
    return [
        f"{what}: {pa.n_factors} {unit} (eigenvalues above the random {pa.quantile:.0%} "
        f"quantile{last}{nxt}){used}"
    ]


ROTATIONS = (
    "varimax",
    "quartimax",
    "biquartimax",
    "equamax",
    "oblimin",
    "parsimax",
    "parsimony",
    "biquartimin",
    "promax",
)  # statsmodels' list


def efa_df(p: int, k: int) -> int:
    """Degrees of freedom of a k-factor EFA of p items: ((p - k)^2 - (p + k)) / 2."""
    return ((p - k) ** 2 - (p + k)) // 2


_KIND = {
    "listwise": "complete respondents",
    "pairwise": "respondents (smallest pair count)",
    "fiml": "respondents",
}


def efa_parameters(p: int, k: int) -> int:
    """Free parameters of a k-factor EFA of p items: loadings and uniquenesses less the
    k(k - 1)/2 fixed by the rotational indeterminacy (p k + p - k(k - 1)/2)."""
    return p * k + p - k * (k - 1) // 2


def efa(
    values: pd.DataFrame,
    n_factors: int,
    rotation: str | None = "oblimin",
    method: str = "ml",
    missing: str = "listwise",
) -> EFAResult:
    """statsmodels' EFA (``method`` ml or pa) with the named rotation (None: unrotated), on the
    item correlations under ``missing`` (listwise or pairwise; n: their rows)."""
    from statsmodels.multivariate.factor import Factor  # on demand: the [analysis] extra

    if rotation is not None and rotation not in ROTATIONS:
        raise PsymError(f"EFA rotation {rotation!r} unknown (one of: {', '.join(ROTATIONS)})")
    c = _correlations(values, missing, "the EFA")
    p, why = len(c.columns), c.reason
    if why is None and not 1 <= n_factors < p:
        why = f"{n_factors} factors for {p} items"
    if why is None and c.rows.n < (par := efa_parameters(p, n_factors)):
        need = "an EFA needs a respondent per parameter, as the CFA and the graded response model"
        why = (
            f"{c.rows.n} {_KIND[c.rows.policy]} for {par} free parameters "
            f"({p} items, {n_factors} factors; {need})"
        )
    if why is None and (df := efa_df(p, n_factors)) < 0:
        why = (
            f"not identified: {n_factors} factors for {p} items leave df {df} "
            "(an EFA needs (items - factors)^2 >= items + factors)"
        )
    if why or c.corr is None:
        return EFAResult(None, rotation, method, reason=why, rows=c.rows)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            res = Factor(corr=c.corr, n_factor=n_factors, method=method, nobs=c.rows.n).fit(rng=0)
            if rotation is not None and n_factors > 1:
                res.rotate(rotation)
    except Exception as exc:  # noqa: BLE001 - a failed extraction is reported, not raised
        return EFAResult(None, rotation, method, reason=f"EFA failed: {exc}", rows=c.rows)
    lam = np.asarray(res.loadings)
    if not np.all(np.isfinite(lam)):
        return EFAResult(None, rotation, method, reason="EFA gave non-finite loadings", rows=c.rows)
    cols = [f"F{j + 1}" for j in range(n_factors)]
    # factor correlations Phi = T'T (GPArotation's convention: L = A (T')^-1; identity for an
    # orthogonal T); statsmodels' results have no attribute for them
    rot = getattr(res, "rotation_matrix", None)
    phi = None if rot is None else np.asarray(rot).T @ np.asarray(rot)
    uniq = np.asarray(getattr(res, "uniqueness", np.full(len(cols), np.nan)), dtype=float)
    heywood = tuple(
        f"{item}: uniqueness {u:.3f} (communality at or above 1)"
        for item, u in zip(c.columns, uniq, strict=False)
        if u <= HEYWOOD_UNIQUENESS
    )
    return EFAResult(
        pd.DataFrame(lam, index=c.columns, columns=cols),
        rotation,
        method,
        None if phi is None else np.asarray(phi),
        heywood=heywood,
        rows=c.rows,
    )


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
        raise PsymError(
            f"congruence: {loadings.shape[1]} factors for {human.shape[1]} human factors"
        )
    res = match_congruence(loadings, human)
    return {k: float("nan") if v is None else v for k, v in res.phi.items()}


def congruence_reading(phi: float) -> str:
    """Lorenzo-Seva & ten Berge's (2006) reading of Tucker's phi: >= .95 the factors can be
    considered equal, .85-.95 fair similarity, below .85 not equal."""
    return "equal" if phi >= 0.95 else "fair similarity" if phi >= 0.85 else "not equal"
