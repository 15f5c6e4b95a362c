"""Confirmatory factor analysis (ML) with semopy: fit, lavaan's fit indices, loadings, Heywood.

The model is a lavaan-syntax string over the data's columns, or a :class:`ScaleStructure`
(one factor per scale, reverse-keyed items reversed first). semopy fits it (objective MLW);
chi-square (N divisor, as lavaan), the baseline, CFI, TLI, RMSEA with its 90% interval and
SRMR are computed here from the sample and model-implied covariances (semopy has no SRMR or
RMSEA interval). Degenerate data give ``fit = None`` with a ``reason`` naming the items:
items that never vary, a covariance matrix that is not positive definite, fewer complete
rows than free parameters, or a fit that does not converge.
"""

from __future__ import annotations

import logging
import re
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.fitstats import (
    FitIndices,
    baseline_chisq,
    constant_items,
    dependent_items,
    fit_indices,
    srmr,
)
from psymetrics_core.analysis.population.missing import (
    RowsUsed,
    em_moments,
    fiml_loss,
    pairwise_cov,
    rows_used,
    usable,
)
from psymetrics_core.analysis.population.mlfit import one_blas_thread
from psymetrics_core.base.errors import PsymError

__all__ = ["Loading", "CFAResult", "cfa", "cfa_by_scale", "model_syntax"]


@dataclass(frozen=True)
class Loading:
    """One loading: unstandardized estimate and lavaan's ``std.all``."""

    factor: str
    item: str
    estimate: float
    std: float


@dataclass
class CFAResult:
    """One CFA. ``fit`` is None (with ``reason``) when the model could not be fitted honestly."""

    model: str
    n: int
    fit: FitIndices | None = None
    loadings: list[Loading] = field(default_factory=list)
    heywood: list[str] = field(default_factory=list)
    reason: str | None = None
    seconds: float = 0.0
    rows: RowsUsed | None = None


def model_syntax(structure: ScaleStructure) -> str:
    """lavaan syntax with one factor per scale (scale names made safe as factor names)."""
    lines = []
    for name, items in structure.scales.items():
        safe = "".join(ch if ch.isalnum() else "_" for ch in name)
        lines.append(f"F_{safe} =~ " + " + ".join(items))
    return "\n".join(lines)


def _prepare(
    data: Responses | pd.DataFrame, model: str | ScaleStructure
) -> tuple[str, pd.DataFrame]:
    values = data.values if isinstance(data, Responses) else data
    if isinstance(model, ScaleStructure):
        model.check(values)
        return model_syntax(model), model.keyed(values)
    return model, values


@dataclass(frozen=True)
class _Input:
    """What a fit rests on under ``--missing``: the rows used, S (N divisor) and its n."""

    frame: pd.DataFrame
    cov: np.ndarray
    n: int
    missing: str
    rows: RowsUsed

    def fit_args(self) -> dict[str, Any]:
        """semopy's ``fit`` and ``load`` arguments: the rows, or S and n (pairwise)."""
        if self.missing == "pairwise":
            cols = list(self.frame.columns)
            return {"cov": pd.DataFrame(self.cov, index=cols, columns=cols), "n_samples": self.n}
        return {"data": self.frame}


def _input(values: pd.DataFrame, missing: str) -> _Input:
    frame = usable(values, missing)
    rows = rows_used(values, missing)
    if missing == "pairwise":
        cov = pairwise_cov(frame, ddof=0)
    elif missing == "fiml" and frame.isna().to_numpy().any():
        cov = em_moments(frame.to_numpy(dtype=float))[1]
    else:
        cov = np.atleast_2d(np.cov(frame.to_numpy(dtype=float).T, ddof=0))
    return _Input(frame, cov, rows.n, missing, rows)


def _refusal(data: _Input, n_free: int) -> str | None:
    """Why no model may be fitted to these rows (None: nothing in the way)."""
    frame, n = data.frame, data.n
    p = frame.shape[1]
    if n <= p or n < n_free:
        kind = "complete" if data.missing == "listwise" else data.missing
        return f"{n} {kind} respondents for {p} items and {n_free} free parameters"
    if n_free > p * (p + 1) // 2:  # e.g. a scale of 1 or 2 items (--limit)
        return (
            f"model not identified: {n_free} free parameters for {p * (p + 1) // 2} "
            f"(co)variances of {p} item{'s' if p != 1 else ''} ({', '.join(frame.columns)})"
        )
    if not np.all(np.isfinite(data.cov)):
        return "a pairwise covariance is undefined (two items never answered together)"
    dep = dependent_items(data.cov, list(frame.columns))
    if dep is not None:
        return f"covariance matrix not positive definite; dependent items: {', '.join(dep)}"
    return None


def cfa(
    data: Responses | pd.DataFrame, model: str | ScaleStructure, missing: str = "listwise"
) -> CFAResult:
    """Fit ``model`` by ML to ``data`` under ``missing``: the complete rows (listwise), the
    pairwise covariances with their smallest pair count as n (pairwise), or every answered cell
    (fiml: semopy's ``ModelMeans``, intercepts free); see the module docstring."""
    import semopy  # on demand: the [analysis] extra

    start = time.perf_counter()
    syntax, values = _prepare(data, model)
    try:
        sem = semopy.Model(syntax)
    except Exception as exc:  # noqa: BLE001 - semopy's parser raises bare exceptions
        why = " ".join(str(exc).split())
        raise PsymError(f"CFA model: cannot parse the lavaan syntax: {why}") from None
    observed = list(sem.vars["observed"])
    absent = [v for v in observed if v not in values.columns]
    if absent:
        raise PsymError(f"CFA model: variables not in the data: {', '.join(absent)}")
    inp = _input(values.loc[:, observed], missing)
    out = CFAResult(syntax, inp.n, rows=inp.rows)
    const = constant_items(inp.frame)
    out.reason = f"items that never vary: {', '.join(const)}" if const else None
    out.reason = out.reason or _refusal(inp, _free_count(sem, inp))
    if out.reason is None and missing == "fiml":
        fit_fiml(semopy.ModelMeans, syntax, inp.frame, out)
    elif out.reason is None:
        _fit(sem, inp, out)
    out.seconds = time.perf_counter() - start
    return out


def _free_count(sem: object, data: _Input) -> int:
    try:
        sem.load(**data.fit_args())  # type: ignore[attr-defined]
        return int(len(sem.param_vals))  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - counted again by the fit, which reports the failure
        return 0


def _fit(sem: object, data: _Input, out: CFAResult) -> None:
    kw = data.fit_args()
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"), one_blas_thread(), _quiet():
            warnings.simplefilter("ignore")
            res = _polish(sem, kw, sem.fit(obj="MLW", **kw))  # type: ignore[attr-defined]
            implied = np.asarray(sem.calc_sigma()[0])  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - a failed fit is reported, not raised
        out.reason = f"the fit failed: {type(exc).__name__}: {exc}"
        return
    if not getattr(res, "success", False) or not np.all(np.isfinite(implied)):
        out.reason = f"the fit did not converge ({getattr(res, 'message', 'no message')})"
        return
    s, n, p = data.cov, data.n, data.frame.shape[1]
    sign, logdet = np.linalg.slogdet(implied)
    if sign <= 0:
        out.reason = "the model-implied covariance matrix is not positive definite"
        return
    f_ml = logdet + np.trace(s @ np.linalg.inv(implied)) - np.linalg.slogdet(s)[1] - p
    df = p * (p + 1) // 2 - len(sem.param_vals)  # type: ignore[attr-defined]
    out.fit = fit_indices(
        float(n * f_ml), df, baseline_chisq([s], [n]), n, srmr_value=srmr(s, implied)
    )
    _loadings(sem, out)


_NAME_TOKEN = re.compile(r"(?<![\w.])([A-Za-z0-9_.]+)(?![\w.]|\s*\*)")


def _safe_names(syntax: str, observed: list[str]) -> tuple[str, dict[str, str]]:
    """``syntax`` with each item renamed ``v0``, ``v1`` ... (semopy's ``ModelMeans`` reads an
    item named ``1`` as its intercept), and the map back to the items' names."""
    names = {item: f"v{j}_" for j, item in enumerate(observed)}
    text = _NAME_TOKEN.sub(lambda m: names.get(m.group(1), m.group(1)), syntax)
    return text, {v: k for k, v in names.items()}


def _srmr_means(s: np.ndarray, implied: np.ndarray, m: np.ndarray, mu: np.ndarray) -> float:
    """SRMR with a mean structure, as lavaan's with ``missing = "ml"``: the standardized
    residual covariances and means ((m_j - mu_j) / sqrt(s_jj)) averaged together."""
    p = len(m)
    cov_part = srmr(s, implied) ** 2 * (p * (p + 1) // 2)
    mean_part = float(np.sum(((m - mu) / np.sqrt(np.diag(s))) ** 2))
    return float(np.sqrt((cov_part + mean_part) / (p * (p + 1) // 2 + p)))


def fit_fiml(model_means: Any, syntax: str, frame: pd.DataFrame, out: CFAResult) -> None:
    """FIML: semopy's ``ModelMeans`` (``obj="ML"`` is its full-information likelihood over
    the observed cells, intercepts free). chi-square = the model's -2 log-likelihood less the
    saturated model's (its EM means and covariances), the baseline's likewise (independent
    items: each item's own mean and variance); SRMR against the EM moments, means included
    (lavaan's h1 and its SRMR with a mean structure).
    ``model_means``: semopy's ``ModelMeans`` class; items are renamed for it (``_safe_names``)
    and their names restored in the loadings."""
    text, back = _safe_names(syntax, [str(c) for c in frame.columns])
    sem = model_means(text)
    frame = frame.rename(columns={v: k for k, v in back.items()})
    frame = frame.loc[:, list(sem.vars["observed"])]
    x = frame.to_numpy(dtype=float)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"), one_blas_thread(), _quiet():
            warnings.simplefilter("ignore")
            res = sem.fit(frame, obj="ML")
            implied, (m, _) = sem.calc_sigma()
            mu = np.asarray(sem.calc_mean(m), dtype=float)[:, 0]
    except Exception as exc:  # noqa: BLE001 - a failed fit is reported, not raised
        out.reason = f"the FIML fit failed: {type(exc).__name__}: {exc}"
        return
    implied = np.asarray(implied, dtype=float)
    if not getattr(res, "success", False) or not np.all(np.isfinite(implied)):
        out.reason = f"the FIML fit did not converge ({getattr(res, 'message', 'no message')})"
        return
    mu_h1, s_h1 = em_moments(x)
    h1 = fiml_loss(x, mu_h1, s_h1)
    chisq = fiml_loss(x, mu, implied) - h1
    base = fiml_loss(x, np.nanmean(x, axis=0), np.diag(np.nanvar(x, axis=0))) - h1
    p = x.shape[1]
    df = p * (p + 1) // 2 + p - len(sem.param_vals)
    bdf = p * (p - 1) // 2
    out.fit = fit_indices(
        float(max(chisq, 0.0)),
        df,
        (float(max(base, 0.0)), bdf),
        out.n,
        srmr_value=_srmr_means(s_h1, implied, mu_h1, mu),
    )
    _loadings(sem, out)
    out.loadings = [replace(x, item=back.get(x.item, x.item)) for x in out.loadings]
    out.heywood = [
        back.get(h.split(":", 1)[0], h.split(":", 1)[0]) + ":" + h.split(":", 1)[1]
        for h in out.heywood
    ]


@contextmanager
def _quiet() -> Iterator[None]:
    """semopy logs "Solver didnt converge" on the root logger; the result's own status is what
    we report (a fit that did not converge gives no numbers), so the log line is held back."""
    before = logging.root.manager.disable
    logging.disable(max(before, logging.WARNING))
    try:
        yield
    finally:
        logging.disable(before)


# BFGS iterations of the polish: from SLSQP's solution it converges in tens of iterations (at
# most 90 over the test suite's fits, H&S included); one that has not converged by then has
# left the admissible region (BFGS ignores the variance bounds: a residual variance of -3,000
# and a loading of -15,000 after semopy's default 10,000 iterations, 5 s of one bfi scale) and
# is discarded anyway
POLISH_MAXITER = 1000


def _polish(sem: Any, kw: dict[str, Any], res: Any) -> Any:
    """semopy's SLSQP stops early when items have large variances (H&S scores coded 0-333:
    chi-square 86.87 for lavaan's 85.31); BFGS continues from its solution, kept when it
    converges within ``POLISH_MAXITER`` iterations and lowers the objective (else the SLSQP
    estimates are restored)."""
    start = np.array(sem.param_vals, copy=True)
    try:
        more = sem.fit(obj="MLW", solver="BFGS", options={"maxiter": POLISH_MAXITER}, **kw)
    except Exception:  # noqa: BLE001 - the SLSQP solution stands
        more = None
    if more is not None and more.success and np.isfinite(more.fun) and more.fun < res.fun:
        return more
    sem.param_vals = start
    sem.update_matrices(start)
    return res


# |standardized loading| at or above this is a Heywood case: the residual variance is at its
# bound of 0 (semopy keeps variances >= 0, so a boundary solution shows as a loading of 1.000)
HEYWOOD_STD = 0.999


def _loadings(sem: object, out: CFAResult) -> None:
    est = sem.inspect(std_est=True)  # type: ignore[attr-defined]
    latent = set(sem.vars["latent"])  # type: ignore[attr-defined]
    observed = set(sem.vars["observed"])  # type: ignore[attr-defined]
    for row in est.itertuples(index=False):
        lval, op, rval = row.lval, row.op, row.rval
        if op == "~" and rval in latent and lval in observed:
            std = float(row[4])
            out.loadings.append(Loading(rval, lval, float(row.Estimate), std))
            if abs(std) >= HEYWOOD_STD:
                out.heywood.append(f"{lval}: standardized loading {std:.3f} on {rval}")
        elif op == "~~" and lval == rval and float(row.Estimate) < 0:
            kind = "residual" if lval in observed else "factor"
            out.heywood.append(f"{lval}: negative {kind} variance {float(row.Estimate):.3f}")


def cfa_by_scale(
    data: Responses, structure: ScaleStructure, missing: str = "listwise"
) -> dict[str, CFAResult]:
    """One one-factor CFA per scale (reverse-keyed items reversed), under ``missing``."""
    structure.check(data.values)
    keyed = structure.keyed(data.values)
    out = {}
    for name, items in structure.scales.items():
        out[name] = cfa(keyed, ScaleStructure({name: items}), missing)
    return out
