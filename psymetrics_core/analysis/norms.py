"""Comparison with human norms: z, percentile, Hedges' g with CI, PsychoBench's test.

What n means for a model: PsychoBench treats a model's R runs as a sample of size R. Those runs
are repeated measurements of one respondent, not independent people, so the t-test's p-value
says whether the run-to-run mean differs from the human mean relative to run-to-run noise. It
is not evidence about a population of models; with greedy decoding the run SD is ~0 and almost
any difference is "significant".
"""

from __future__ import annotations

import math
from typing import Any

from scipy import stats

__all__ = ["N_CAVEAT", "z_and_percentile", "hedges_g", "psychobench_test", "norm_groups"]

N_CAVEAT = (
    "n for the model is the number of administrations (seeded repeats x conditions) of ONE "
    "model; they are not independent respondents, so p-values and CIs describe run-to-run "
    "noise, not a population."
)


def z_and_percentile(score: float, mean: float, sd: float) -> dict[str, float]:
    """z = (score - mean) / sd and the normal-theory percentile 100 * Phi(z)."""
    z = (score - mean) / sd
    return {"z": z, "percentile": 100.0 * float(stats.norm.cdf(z))}


def hedges_g(
    m1: float, s1: float, n1: int, m2: float, s2: float, n2: int, confidence: float = 0.95
) -> dict[str, float]:
    """Hedges' g (model minus humans) with the pooled SD and its CI.

    d = (m1 - m2) / s_pooled, s_pooled^2 = ((n1-1) s1^2 + (n2-1) s2^2) / (n1 + n2 - 2);
    g = J d with J = 1 - 3 / (4 (n1 + n2) - 9); SE = sqrt((n1+n2)/(n1 n2) + g^2 / (2 (n1+n2)));
    CI = g -+ t_{(1+conf)/2, n1+n2-2} SE (as pingouin and R's effsize::cohen.d).
    """
    pooled = math.sqrt(((n1 - 1) * s1**2 + (n2 - 1) * s2**2) / (n1 + n2 - 2))
    d = (m1 - m2) / pooled
    g = d * (1 - 3 / (4 * (n1 + n2) - 9))
    se = math.sqrt((n1 + n2) / (n1 * n2) + g**2 / (2 * (n1 + n2)))
    crit = float(stats.t.ppf(0.5 + confidence / 2, n1 + n2 - 2))
    return {"g": g, "ci_low": g - crit * se, "ci_high": g + crit * se, "se": se}


def psychobench_test(
    m1: float, s1: float, n1: int, m2: float, s2: float, n2: int, alpha: float = 0.01
) -> dict[str, Any]:
    """PsychoBench's two-step test, exactly as its repo (Huang et al., 2024).

    1e-8 is added to both SDs; a two-tailed F-test (larger variance on top) decides equal
    variances (p_F > alpha); then Student's or Welch's two-sided t-test from summary stats.
    """
    s1 += 1e-8
    s2 += 1e-8
    if s1 > s2:
        f, df1, df2 = s1**2 / s2**2, n1 - 1, n2 - 1
    else:
        f, df1, df2 = s2**2 / s1**2, n2 - 1, n1 - 1
    p_f = 2 * (1 - float(stats.f.cdf(f, df1, df2)))
    equal_var = p_f > alpha
    t, p = stats.ttest_ind_from_stats(m1, s1, n1, m2, s2, n2, equal_var=equal_var)
    if equal_var:
        df: float = n1 + n2 - 2
    else:
        a, b = s1**2 / n1, s2**2 / n2
        df = (a + b) ** 2 / (a**2 / (n1 - 1) + b**2 / (n2 - 1))
    return {
        "F": f,
        "df1": df1,
        "df2": df2,
        "p_F": p_f,
        "equal_var": bool(equal_var),
        "t": float(t),
        "df": float(df),
        "p": float(p),
        "significant": bool(p <= alpha),
        "alpha": alpha,
        "direction": "higher" if t > 0 else "lower" if t < 0 else "equal",
    }


def norm_groups(instrument: Any) -> dict[str, list[dict[str, Any]]]:
    """Norms of an instrument, read defensively: {scale: [{name, mean, sd, n, source, year}]}.

    Looks at each scale definition's ``norms`` (``NormGroup`` objects or mappings), then at
    ``instrument.norms`` and ``instrument.extra["norms"]`` ({scale: [groups]} or {scale:
    {group: stats}}). Groups without a mean and an sd are skipped; ``n`` may be missing (None).
    """
    raw: dict[str, Any] = {}
    for scale, sdef in (getattr(instrument, "scales", None) or {}).items():
        groups = getattr(sdef, "norms", None)
        if groups:
            raw[str(scale)] = list(groups)
    extra = getattr(instrument, "norms", None)
    if extra is None:
        extra = (getattr(instrument, "extra", None) or {}).get("norms")
    if isinstance(extra, dict):
        for scale, groups in extra.items():
            raw.setdefault(str(scale), groups)
    out: dict[str, list[dict[str, Any]]] = {}
    for scale, groups in raw.items():
        if isinstance(groups, dict):
            if isinstance(groups.get("groups"), list):
                groups = groups["groups"]
            else:
                groups = [{"name": k, **v} for k, v in groups.items() if isinstance(v, dict)]
        if not isinstance(groups, list | tuple):
            continue
        for g in groups:
            rec = _group_record(g)
            if rec is not None:
                out.setdefault(scale, []).append(rec)
    return out


def _group_record(g: Any) -> dict[str, Any] | None:
    def get(key: str) -> Any:
        return g.get(key) if isinstance(g, dict) else getattr(g, key, None)

    try:
        n = get("n")
        return {
            "name": str(get("name") or get("group") or "norm"),
            "mean": float(get("mean")),
            "sd": float(get("sd")),
            "n": int(n) if n not in (None, "") else None,
            "source": get("source"),
            "year": get("year"),
        }
    except (KeyError, TypeError, ValueError):
        return None
