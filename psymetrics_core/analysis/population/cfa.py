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
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
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


def _refusal(frame: pd.DataFrame, n_free: int) -> str | None:
    """Why no model may be fitted to these complete rows (None: nothing in the way)."""
    n, p = frame.shape
    if n <= p or n < n_free:
        return f"{n} complete respondents for {p} items and {n_free} free parameters"
    if n_free > p * (p + 1) // 2:  # e.g. a scale of 1 or 2 items (--limit)
        return (
            f"model not identified: {n_free} free parameters for {p * (p + 1) // 2} "
            f"(co)variances of {p} item{'s' if p != 1 else ''} ({', '.join(frame.columns)})"
        )
    cov = np.atleast_2d(np.cov(frame.to_numpy().T, ddof=0))
    dep = dependent_items(cov, list(frame.columns))
    if dep is not None:
        return f"covariance matrix not positive definite; dependent items: {', '.join(dep)}"
    return None


def cfa(data: Responses | pd.DataFrame, model: str | ScaleStructure) -> CFAResult:
    """Fit ``model`` by ML to the complete rows of ``data``; see the module docstring."""
    import semopy  # on demand: the [analysis] extra

    start = time.perf_counter()
    syntax, values = _prepare(data, model)
    try:
        sem = semopy.Model(syntax)
    except Exception as exc:  # noqa: BLE001 - semopy's parser raises bare exceptions
        why = " ".join(str(exc).split())
        raise PsymError(f"CFA model: cannot parse the lavaan syntax: {why}") from None
    observed = list(sem.vars["observed"])
    missing = [v for v in observed if v not in values.columns]
    if missing:
        raise PsymError(f"CFA model: variables not in the data: {', '.join(missing)}")
    frame = values.loc[:, observed].dropna(axis=0, how="any")
    out = CFAResult(syntax, len(frame))
    const = constant_items(frame)
    out.reason = f"items that never vary: {', '.join(const)}" if const else None
    out.reason = out.reason or _refusal(frame, _free_count(sem, frame))
    if out.reason is None:
        _fit(sem, frame, out)
    out.seconds = time.perf_counter() - start
    return out


def _free_count(sem: object, frame: pd.DataFrame) -> int:
    try:
        sem.load(frame)  # type: ignore[attr-defined]
        return int(len(sem.param_vals))  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - counted again by the fit, which reports the failure
        return 0


def _fit(sem: object, frame: pd.DataFrame, out: CFAResult) -> None:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"), one_blas_thread(), _quiet():
            warnings.simplefilter("ignore")
            res = _polish(sem, frame, sem.fit(frame, obj="MLW"))  # type: ignore[attr-defined]
            implied = np.asarray(sem.calc_sigma()[0])  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - a failed fit is reported, not raised
        out.reason = f"the fit failed: {type(exc).__name__}: {exc}"
        return
    if not getattr(res, "success", False) or not np.all(np.isfinite(implied)):
        out.reason = f"the fit did not converge ({getattr(res, 'message', 'no message')})"
        return
    x = frame.to_numpy(dtype=float)
    s = np.cov(x.T, ddof=0)
    n, p = x.shape
    sign, logdet = np.linalg.slogdet(implied)
    if sign <= 0:
        out.reason = "the model-implied covariance matrix is not positive definite"
        return
    f_ml = logdet + np.trace(s @ np.linalg.inv(implied)) - np.linalg.slogdet(s)[1] - p
    df = p * (p + 1) // 2 - len(sem.param_vals)  # type: ignore[attr-defined]
    out.fit = fit_indices(float(n * f_ml), df, baseline_chisq([s], [n]), n,
                          srmr_value=srmr(s, implied))  # fmt: skip
    _loadings(sem, out)


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


def _polish(sem: Any, frame: pd.DataFrame, res: Any) -> Any:
    """semopy's SLSQP stops early when items have large variances (H&S scores coded 0-333:
    chi-square 86.87 for lavaan's 85.31); BFGS continues from its solution, kept when it
    lowers the objective (else the SLSQP estimates are restored)."""
    start = np.array(sem.param_vals, copy=True)
    try:
        more = sem.fit(frame, obj="MLW", solver="BFGS")
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


def cfa_by_scale(data: Responses, structure: ScaleStructure) -> dict[str, CFAResult]:
    """One one-factor CFA per scale (reverse-keyed items reversed)."""
    structure.check(data.values)
    keyed = structure.keyed(data.values)
    out = {}
    for name, items in structure.scales.items():
        out[name] = cfa(keyed, ScaleStructure({name: items}))
    return out
