"""Measurement invariance across groups: configural, metric (loadings), scalar (+ intercepts).

Each step is a multi-group ML fit with a mean structure (the engine in ``mlfit``; marker
identification as lavaan's default, latent means free from the second group on in the scalar
model), compared with the step before: delta chi-square test, delta CFI, delta RMSEA. The
conventional decisions: invariance is rejected when CFI drops by more than .01 (Cheung &
Rensvold, 2002) or RMSEA rises by .015 or more (Chen, 2007). A group too small, items that
never vary within a group, or a fit that does not converge give no ladder and the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
from scipy.stats import chi2

from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.fitstats import (
    FitIndices,
    baseline_chisq,
    constant_items,
    dependent_items,
    fit_indices,
)
from psymetrics_core.analysis.population.missing import (
    RowsUsed,
    fiml_refusal,
    pairwise_cov,
    rows_used,
    usable,
)
from psymetrics_core.analysis.population.mlfit import LEVELS, GroupMoments, Pattern, fit_ml
from psymetrics_core.base.errors import PsymError

__all__ = ["InvarianceStep", "InvarianceResult", "measurement_invariance", "parse_factors"]

CFI_DROP = -0.01  # Cheung & Rensvold (2002): delta CFI <= -.01 rejects invariance
RMSEA_RISE = 0.015  # Chen (2007): delta RMSEA >= .015 rejects invariance


@dataclass(frozen=True)
class InvarianceStep:
    """One rung: its fit and, from metric on, the comparison with the rung below."""

    level: str
    fit: FitIndices
    delta_chisq: float | None = None
    delta_df: int | None = None
    delta_pvalue: float | None = None
    delta_cfi: float | None = None
    delta_rmsea: float | None = None
    holds: bool | None = None
    decision: str = ""


@dataclass
class InvarianceResult:
    """The ladder (empty with ``reason`` when it cannot be fitted)."""

    groups: dict[str, int]
    steps: list[InvarianceStep] = field(default_factory=list)
    reason: str | None = None
    rows: RowsUsed | None = None


def parse_factors(
    model: str | ScaleStructure | Mapping[str, Sequence[str]],
) -> dict[str, list[str]]:
    """Factor -> items from lavaan ``=~`` lines, a scale structure, or a mapping."""
    if isinstance(model, ScaleStructure):
        return {k: list(v) for k, v in model.scales.items()}
    if not isinstance(model, str):
        return {k: list(v) for k, v in model.items()}
    out: dict[str, list[str]] = {}
    for n, line in enumerate(model.replace(";", "\n").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if "=~" not in line:
            raise PsymError(f"invariance model, line {n}: only 'factor =~ item + item' lines")
        left, right = line.split("=~", 1)
        out.setdefault(left.strip(), []).extend(t.strip() for t in right.split("+") if t.strip())
    if not out:
        raise PsymError("invariance model: no 'factor =~ items' line")
    return out


def _group_refusal(frames: dict[str, pd.DataFrame], min_n: int, ns: dict[str, int]) -> str | None:
    small = {g: ns[g] for g in frames if ns[g] < min_n}
    if len(frames) < 2:
        return f"needs 2+ groups, has {len(frames)}"
    if small:
        shown = ", ".join(f"{g} ({n})" for g, n in small.items())
        return f"groups too small (need {min_n}+ complete respondents): {shown}"
    for g, f in frames.items():
        const = constant_items(f)
        if const:
            return f"items that never vary in group {g}: {', '.join(const)}"
        dep = dependent_items(pairwise_cov(f, ddof=0), list(f.columns))
        if dep is not None:
            return (
                f"covariance not positive definite in group {g}; dependent items: {', '.join(dep)}"
            )
    return None


def measurement_invariance(
    data: Responses,
    model: str | ScaleStructure | Mapping[str, Sequence[str]],
    min_group_size: int | None = None,
    missing: str = "listwise",
) -> InvarianceResult:
    """The configural -> metric -> scalar ladder across ``data.group``: each group's moments
    from its complete rows (listwise) or pairwise (n: the group's smallest pair count); the
    multi-group engine has no full-information objective, so fiml is refused."""
    if data.group is None:
        raise PsymError("measurement invariance: the data have no group column")
    factors = parse_factors(model)
    items = list(dict.fromkeys(i for its in factors.values() for i in its))
    values = model.keyed(data.values) if isinstance(model, ScaleStructure) else data.values
    absent = [i for i in items if i not in values.columns]
    if absent:
        raise PsymError(f"invariance model: items not in the data: {', '.join(absent)}")
    frame = values.loc[:, items].assign(_g=data.group.to_numpy())
    frame = frame[frame["_g"].notna()]
    frames = {
        str(g): usable(f.drop(columns="_g"), missing) for g, f in frame.groupby("_g", sort=False)
    }
    ns = {g: rows_used(f, missing).n for g, f in frames.items()}
    out = InvarianceResult(ns, rows=rows_used(frame.drop(columns="_g"), missing))
    if missing == "fiml":
        out.reason = fiml_refusal(
            "the invariance ladder", "its multi-group engine fits sample moments"
        )
        return out
    out.reason = _group_refusal(frames, min_group_size or 2 * len(items) + 1, ns)
    if out.reason is None:
        pos = {it: j for j, it in enumerate(items)}
        pat = Pattern(len(items), tuple(tuple(pos[i] for i in its) for its in factors.values()))
        _ladder(pat, list(frames.values()), out)
    return out


def _ladder(pat: Pattern, frames: list[pd.DataFrame], out: InvarianceResult) -> None:
    moments = []
    for f in frames:
        n = rows_used(f, "pairwise").n  # complete rows: their count
        mean = f.mean(axis=0).to_numpy(dtype=float)
        moments.append(GroupMoments(pairwise_cov(f, ddof=0), mean, n))
    base = baseline_chisq([m.cov for m in moments], [m.n for m in moments])
    total = sum(m.n for m in moments)
    for level in LEVELS:
        res = fit_ml(pat, moments, level=level, means=True)
        if not res.converged:
            out.reason = f"the {level} model did not converge ({res.message})"
            return
        fit = fit_indices(res.chisq, res.df, base, total, len(moments))
        out.steps.append(_compare(level, fit, out.steps[-1] if out.steps else None))


def _compare(level: str, fit: FitIndices, prev: InvarianceStep | None) -> InvarianceStep:
    if prev is None:
        return InvarianceStep(level, fit, decision="baseline of the ladder")
    dchi, ddf = fit.chisq - prev.fit.chisq, fit.df - prev.fit.df
    p = float(chi2.sf(dchi, ddf)) if ddf > 0 else None
    dcfi = None if fit.cfi is None or prev.fit.cfi is None else fit.cfi - prev.fit.cfi
    drm = None if fit.rmsea is None or prev.fit.rmsea is None else fit.rmsea - prev.fit.rmsea
    reasons = []
    if dcfi is not None and dcfi <= CFI_DROP:
        reasons.append(f"CFI drops {dcfi:+.3f} (<= -.01, Cheung & Rensvold 2002)")
    if drm is not None and drm >= RMSEA_RISE:
        reasons.append(f"RMSEA rises {drm:+.3f} (>= .015, Chen 2007)")
    holds = None if dcfi is None or drm is None else not reasons
    if reasons:
        decision = "; ".join(reasons)
    elif holds is None:
        decision = "no decision: " + (fit.reason or prev.fit.reason or "CFI or RMSEA undefined")
    else:
        decision = "holds by delta CFI and delta RMSEA"
    return InvarianceStep(level, fit, dchi, ddf, p, dcfi, drm, holds, decision)
