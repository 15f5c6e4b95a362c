"""Variance decomposition of scale scores across the condition facets that were run.

A generalizability-style breakdown: an additive linear model of the score on every facet that
varies (option order, wording, persona, ...) plus the seed (repeat), fitted by OLS
(statsmodels); each facet's share is its sequential sum of squares over the total, and the
residual share is what the facets do not explain (their interactions and noise).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["decompose"]


def decompose(frame: pd.DataFrame, facets: Sequence[str], value: str = "score") -> dict[str, Any]:
    """Share of the variance of ``value`` per facet column in ``frame`` and the residual.

    Facets with a single level are left out. Returns {"n", "total_ss", "shares": {facet:
    share, "residual": share}}; shares are NaN when the score does not vary.
    """
    import statsmodels.formula.api as smf  # on demand: the [analysis] extra
    from statsmodels.stats.anova import anova_lm  # on demand: the [analysis] extra

    d = frame.dropna(subset=[value]).copy()
    used = [f for f in facets if f in d and d[f].nunique() > 1]
    total = float(((d[value] - d[value].mean()) ** 2).sum()) if len(d) else float("nan")
    out: dict[str, Any] = {"n": len(d), "total_ss": total, "facets": used, "shares": {}}
    if not used or len(d) < 2 or not total > 0:
        out["shares"] = {f: float("nan") for f in used} | {"residual": float("nan")}
        if len(d) >= 2 and total == 0:
            out["note"] = "the score is identical in every administration"
        return out
    names = {f: f"f{i}" for i, f in enumerate(used)}
    d = d.rename(columns={f: names[f] for f in used} | {value: "y"})
    formula = "y ~ " + " + ".join(f"C({names[f]})" for f in used)
    model = smf.ols(formula, data=d).fit()
    with np.errstate(all="ignore"):
        table = anova_lm(model, typ=1)
    shares: dict[str, float] = {}
    for f in used:
        shares[f] = float(table.loc[f"C({names[f]})", "sum_sq"]) / total
    resid = float(table.loc["Residual", "sum_sq"]) if "Residual" in table.index else 0.0
    shares["residual"] = max(resid, 0.0) / total
    out["shares"] = shares
    return out
