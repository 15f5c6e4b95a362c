"""Samejima's graded response model (GRM) per scale: discrimination, thresholds, information.

Each scale is fitted on its own (unidimensional, theta ~ N(0, 1)) by marginal maximum
likelihood with the EM algorithm, on the item's keyed direction (reverse-keyed items reversed
first, ``ScaleStructure.keyed``). Item j's category probabilities are
P(X >= k | theta) = 1 / (1 + exp(-a_j (theta - b_jk))), k = 1..K_j-1, with ordered thresholds
b_j1 < ... < b_jK-1; the test information is the sum of the item informations
I_j(theta) = sum_k (P*'_k-1 - P*'_k)^2 / P_k (P*' = a P* (1 - P*)).

Engine: the ``mirt`` package for Python (MIT; 1.2.0, 2026; a Rust backend with wheels for
Linux, macOS and Windows; Python >= 3.11), the optional ``[irt]`` extra. Chosen over ``girth``
0.8.0 (MIT, alpha, no release since 2021), whose estimates agree with mirt's within 0.01 (a)
and 0.015 (b) on the simulated data of the tests (a test compares them) but which is dormant;
writing our own EM was not needed. We call mirt's EM estimator (61 Gauss-Hermite points) with
``use_gpu=False`` (its ``fit_mirt`` imports torch, where installed, to look for a GPU); 1,250
respondents x BFI-44 take about 0.4 s. mirt fits within a box (discrimination 0.1..5,
thresholds -6..6) and reports convergence; a fit whose estimates sit on that box is no
maximum-likelihood fit, so it gives no numbers (see below).

Answers must be whole numbers (ordered categories). Per item the categories are the values
actually used, in order: a value nobody chose is collapsed (``GRMItem.categories`` lists the
values the thresholds separate). Missing answers are left out of the likelihood (MAR);
respondents with no answer on the scale are dropped. Degenerate data give ``items = []``,
``information = None`` and a ``reason`` naming the items: fewer than 3 items, items never
answered or never varying, answers that are not whole numbers, fewer respondents than
parameters, items negatively related to the rest of the scale (item-rest r < 0: the GRM's
discriminations are positive on the keyed direction; a missing reverse key or acquiescence), a
fit that fails or does not converge, estimates on the box, thresholds out of order.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.missing import RowsUsed, rows_used, usable
from psymetrics_core.base.errors import PsymError

__all__ = ["GRMItem", "GRMResult", "graded_response", "irt_json", "irt_text", "THETA"]

THETA = tuple(float(t) for t in np.linspace(-4.0, 4.0, 33))  # the information grid, step 0.25
MIN_ITEMS = 3
MAX_CATEGORIES = 20
MAX_ITER = 2000  # EM iterations (mirt's tolerance 1e-4); the 1,250 x BFI-44 fits need < 60
_A_BOX = (0.1, 5.0)  # mirt's box for GRM discriminations and thresholds
_B_BOX = 6.0
_EDGE = 1e-3


@dataclass(frozen=True)
class GRMItem:
    """One item: discrimination ``a`` and thresholds ``b_1 < ... < b_K-1`` between the
    ``categories`` (the keyed answer values used, ascending)."""

    item: str
    discrimination: float
    thresholds: tuple[float, ...]
    categories: tuple[float, ...]


@dataclass
class GRMResult:
    """One scale's GRM. ``items`` is empty and ``information`` None (with ``reason``) when no
    honest fit exists."""

    scale: str
    n: int
    items: list[GRMItem] = field(default_factory=list)
    theta: tuple[float, ...] = THETA
    information: list[float] | None = None
    reason: str | None = None
    iterations: int = 0
    seconds: float = 0.0
    rows: RowsUsed | None = None
    note: str | None = None  # how --missing applied (pairwise: the full-information fallback)


def require_irt() -> None:
    """One line saying how to install the irt extra when it is missing (``--irt`` checks it
    before any analysis)."""
    _mirt()


def _mirt() -> Any:
    """The mirt package, or one line saying how to install it."""
    try:
        import mirt  # on demand: the [irt] extra
    except ImportError as exc:
        raise PsymError(
            f"the graded response model (--irt) needs the irt extra ({exc.name} is missing; "
            "Python >= 3.11): pip install 'psymetrics-core[analysis,irt]'"
        ) from None
    return mirt


def _names(items: list[str], limit: int = 10) -> str:
    return ", ".join(items[:limit]) + (f" ... ({len(items)} in all)" if len(items) > limit else "")


def _codes(frame: pd.DataFrame) -> tuple[np.ndarray, list[tuple[float, ...]], str | None]:
    """Answers recoded 0..m-1 per item over the values used (NaN stays NaN), those values per
    item, or the reason the items are not ordered categories."""
    x = frame.to_numpy(dtype=float)
    not_whole = [c for j, c in enumerate(frame.columns) if np.any(np.nan_to_num(x[:, j]) % 1)]
    if not_whole:
        return x, [], f"answers that are not whole numbers (categories): {_names(not_whole)}"
    cats = [tuple(float(v) for v in np.unique(x[~np.isnan(x[:, j]), j])) for j in range(x.shape[1])]
    many = [c for c, v in zip(frame.columns, cats, strict=True) if len(v) > MAX_CATEGORIES]
    if many:
        return x, [], f"more than {MAX_CATEGORIES} distinct answers: {_names(many)}"
    codes = np.full(x.shape, np.nan)
    for j, values in enumerate(cats):
        seen = ~np.isnan(x[:, j])
        codes[seen, j] = np.searchsorted(np.asarray(values), x[seen, j])
    return codes, cats, None


def _refusal(frame: pd.DataFrame, codes: np.ndarray, cats: list[tuple[float, ...]]) -> str | None:
    """Why no GRM may be fitted to ``frame`` (None: nothing in the way)."""
    items = [str(c) for c in frame.columns]
    if len(items) < MIN_ITEMS:
        return f"{len(items)} item(s) ({_names(items)}); the model needs at least {MIN_ITEMS}"
    never = [i for i, v in zip(items, cats, strict=True) if not v]
    if never:
        return f"items never answered: {_names(never)}"
    const = [i for i, v in zip(items, cats, strict=True) if len(v) == 1]
    if const:
        return f"items that never vary: {_names(const)}"
    n_par = sum(len(v) for v in cats)  # one discrimination and K-1 thresholds per item
    if len(frame) < n_par:
        return f"{len(frame)} respondents for {n_par} parameters ({len(items)} items)"
    return _negative(codes, items)


def _negative(codes: np.ndarray, items: list[str]) -> str | None:
    """The items whose answers fall as the rest of the scale rises (item-rest r < 0): the GRM
    has positive discriminations on the keyed direction, so these are not fitted."""
    answered = ~np.isnan(codes)
    total, count = np.nansum(codes, axis=1), answered.sum(axis=1)
    found = []
    for j, item in enumerate(items):
        ok = answered[:, j] & (count > 1)
        x = codes[ok, j]
        rest = (total[ok] - x) / (count[ok] - 1)  # the mean of the other answered items
        if len(x) > 2 and x.std() > 0 and rest.std() > 0:
            r = float(np.corrcoef(x, rest)[0, 1])
            if r < 0:
                found.append(f"{item} (r {r:.2f})")
    if not found:
        return None
    return (
        "items negatively related to the rest of the scale (item-rest r < 0; a reverse key "
        f"missing?): {_names(found)}"
    )


def _on_box(items: list[GRMItem]) -> str | None:
    """The items whose estimates sit on mirt's box (no interior maximum), by kind."""
    low = [i.item for i in items if i.discrimination <= _A_BOX[0] + _EDGE]
    high = [i.item for i in items if i.discrimination >= _A_BOX[1] - _EDGE]
    edge = [i.item for i in items if any(abs(b) >= _B_BOX - _EDGE for b in i.thresholds)]
    parts = [
        f"{what}: {_names(names)}"
        for what, names in (
            (f"discrimination at the lower bound {_A_BOX[0]:g} (unrelated to the scale)", low),
            (
                f"discrimination at the upper bound {_A_BOX[1]:g} (answers determined by the "
                "others)",
                high,
            ),
            (f"a threshold at the bound ±{_B_BOX:g} (a category almost never used)", edge),
        )
        if names
    ]
    return f"estimates at the estimator's bounds: {'; '.join(parts)}" if parts else None


def _fit(
    codes: np.ndarray,
    cats: list[tuple[float, ...]],
    items: list[str],
    out: GRMResult,
    max_iter: int,
) -> None:
    """Fit the GRM to ``codes`` with mirt; fills ``out`` (or its reason)."""
    mirt = _mirt()
    ncat = [len(v) for v in cats]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            # the estimator itself, with use_gpu=False: fit_mirt would import torch where it
            # is installed (seconds and ~200 MB) to look for a GPU
            estimator = mirt.EMEstimator(
                n_quadpts=61, max_iter=max_iter, use_gpu=False, compute_standard_errors=False
            )
            res = estimator.fit(mirt.GradedResponseModel(len(items), n_categories=ncat), codes)
            model = res.model
            a = np.asarray(model.discrimination, dtype=float).reshape(-1)
            b = np.asarray(model.thresholds, dtype=float).reshape(len(items), -1)
            info = np.asarray(model.information(np.asarray(THETA)[:, None]), dtype=float)
    except Exception as exc:  # noqa: BLE001 - a failed fit is reported, not raised
        out.reason = f"the fit failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        return
    out.iterations = int(res.n_iterations)
    if not bool(res.converged):
        out.reason = f"the fit did not converge in {out.iterations} EM iterations"
        return
    fitted = [
        GRMItem(i, float(a[j]), tuple(float(t) for t in b[j, : ncat[j] - 1]), cats[j])
        for j, i in enumerate(items)
    ]
    bad = [f.item for f in fitted if np.any(np.diff(f.thresholds) <= 0)]
    out.reason = (
        _on_box(fitted)
        or (f"thresholds not ordered: {_names(bad)}" if bad else None)
        or (None if np.all(np.isfinite(info)) else "the information is not finite")
    )
    if out.reason is None:
        out.items, out.information = fitted, [float(v) for v in info.reshape(-1)]


PAIRWISE_FALLBACK = (
    "--missing pairwise: a likelihood over answer patterns has no pairwise "
    "form; fitted on every answer (full information, as fiml)"
)


def grm_scale(
    scale: str, frame: pd.DataFrame, max_iter: int = MAX_ITER, missing: str = "fiml"
) -> GRMResult:
    """The GRM of one scale's keyed answers (respondents x items; NaN = no answer), with at
    most ``max_iter`` EM iterations: on the complete rows (``missing`` listwise), else on every
    answer (the marginal likelihood leaves a missing answer out: full information under MAR;
    pairwise falls back to it, said in ``note``)."""
    start = time.perf_counter()
    policy = "listwise" if missing == "listwise" else "fiml"
    rows = rows_used(frame, policy)
    frame = usable(frame, policy)
    out = GRMResult(
        scale, rows.n, rows=rows, note=PAIRWISE_FALLBACK if missing == "pairwise" else None
    )
    codes, cats, why = _codes(frame)
    out.reason = why or _refusal(frame, codes, cats)
    if out.reason is None:
        _fit(codes, cats, [str(c) for c in frame.columns], out, max_iter)
    out.seconds = time.perf_counter() - start
    return out


def graded_response(
    resp: Responses,
    structure: ScaleStructure,
    max_iter: int = MAX_ITER,
    missing: str = "listwise",
) -> dict[str, GRMResult]:
    """One graded response model per scale of ``structure`` (reverse-keyed items reversed),
    under ``missing`` (``grm_scale``)."""
    structure.check(resp.values)
    _mirt()  # the missing extra is one line before any work
    keyed = structure.keyed(resp.values)
    return {
        name: grm_scale(name, keyed.loc[:, list(items)], max_iter, missing)
        for name, items in structure.scales.items()
    }


def irt_json(results: dict[str, GRMResult]) -> dict[str, Any]:
    """The ``irt`` key of a population task entry (the JSON contract of issue 25)."""
    return {
        s: {
            "n": r.n,
            "model": "graded",
            "items": [
                {
                    "item": i.item,
                    "discrimination": i.discrimination,
                    "thresholds": list(i.thresholds),
                    "categories": list(i.categories),
                }
                for i in r.items
            ],
            "information": None
            if r.information is None
            else {"theta": list(r.theta), "test": r.information},
            "reason": r.reason,
            "rows": None if r.rows is None else r.rows.to_json(),
            "note": r.note,
        }
        for s, r in results.items()
    }


def irt_text(irt: dict[str, GRMResult]) -> list[str]:
    """Per scale: the range of a and b, and where the test information peaks."""
    out = []
    for scale, r in irt.items():
        used = "" if r.rows is None else f", {r.rows.text()}"
        if r.information is None:
            out.append(f"  IRT (graded) {scale}: undefined ({r.reason}){used}")
            continue
        a = [i.discrimination for i in r.items]
        b = [t for i in r.items for t in i.thresholds]
        k = int(np.argmax(r.information))
        out.append(
            f"  IRT (graded) {scale}: {len(a)} items, "
            + (r.rows.text() if r.rows is not None else f"n {r.n}")
            + f", a {min(a):.2f}..{max(a):.2f}, "
            f"b {min(b):.2f}..{max(b):.2f}; information peaks at theta {r.theta[k]:+.2f} "
            f"({r.information[k]:.2f})"
        )
        if r.note:
            out.append(f"    {r.note}")
    return out
