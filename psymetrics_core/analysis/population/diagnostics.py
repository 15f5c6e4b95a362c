"""Diagnostics to read before any population statistic.

- missing share per item (parse failures and refusals are NaN in the matrix);
- items that never vary across respondents, by name (Jung found up to 68% on LLM personas);
- straight-lining share: respondents who give one same answer to every item they answered;
- acquiescence: mean raw (unreversed) answer minus the response-scale midpoint, over
  respondents; positive = agreeing regardless of keying (needs the midpoint);
- variance ratio per scale: variance of the population's scale scores (mean of keyed items)
  over the squared human norm SD, where a norm is given (1 = as spread as people).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.fitstats import constant_items

__all__ = ["VarianceRatio", "Diagnostics", "diagnose", "scale_scores"]


@dataclass(frozen=True)
class VarianceRatio:
    """var(population scale scores) / human SD^2; None with the reason when undefined."""

    scale: str
    ratio: float | None
    population_sd: float | None
    human_sd: float | None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Diagnostics:
    """The population's response diagnostics (see the module docstring)."""

    n_respondents: int
    n_items: int
    missing_share: dict[str, float]
    constant_items: list[str]
    constant_share: float | None
    straightlining_share: float | None
    acquiescence: float | None
    variance_ratios: list[VarianceRatio] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)


# A respondent's scale score needs at least this share of the scale's items answered (our
# choice: the usual prorating rule of score manuals, which range from half to four in five);
# fewer leave the score NaN rather than a mean of one or two items presented as the scale.
MIN_ANSWERED_SHARE = 0.5


def scale_scores(data: Responses, structure: ScaleStructure) -> dict[str, np.ndarray]:
    """Each respondent's mean over the answered keyed items of each scale; NaN where fewer than
    ``MIN_ANSWERED_SHARE`` of the scale's items were answered."""
    keyed = structure.keyed(data.values)
    out = {}
    for name, items in structure.scales.items():
        block = keyed.loc[:, list(items)]
        enough = block.notna().sum(axis=1) >= MIN_ANSWERED_SHARE * len(items)
        out[name] = block.mean(axis=1, skipna=True).where(enough).to_numpy()
    return out


def _straightlining(values: np.ndarray) -> tuple[float | None, str | None]:
    answered = np.sum(~np.isnan(values), axis=1)
    rows = values[answered >= 2]
    if len(rows) == 0:
        return None, "no respondent answered 2+ items"
    same = [np.unique(r[~np.isnan(r)]).size == 1 for r in rows]
    return float(np.mean(same)), None


def _variance_ratios(
    data: Responses, structure: ScaleStructure, human_sd: Mapping[str, float]
) -> list[VarianceRatio]:
    out = []
    scores = scale_scores(data, structure)
    for scale, hsd in human_sd.items():
        if scale not in scores:
            out.append(VarianceRatio(scale, None, None, hsd, "no such scale in the structure"))
            continue
        s = scores[scale][~np.isnan(scores[scale])]
        if len(s) < 2:
            out.append(VarianceRatio(scale, None, None, hsd, f"{len(s)} scored respondents"))
        elif not hsd > 0:
            out.append(
                VarianceRatio(
                    scale, None, float(np.std(s, ddof=1)), hsd, "human SD is not positive"
                )
            )
        else:
            sd = float(np.std(s, ddof=1))
            out.append(VarianceRatio(scale, sd**2 / hsd**2, sd, hsd))
    return out


def diagnose(
    data: Responses,
    structure: ScaleStructure | None = None,
    midpoint: float | None = None,
    human_sd: Mapping[str, float] | None = None,
) -> Diagnostics:
    """Diagnostics of ``data`` (``structure`` and ``human_sd`` for the variance ratios)."""
    values = data.values
    n, k = values.shape
    const = constant_items(values)
    sl, sl_why = _straightlining(values.to_numpy(dtype=float))
    out = Diagnostics(
        n,
        k,
        {str(c): float(v) for c, v in values.isna().mean().items()},
        const,
        len(const) / k if k else None,
        sl,
        None,
    )
    if sl_why:
        out.reasons["straightlining_share"] = sl_why
    if midpoint is None:
        out.reasons["acquiescence"] = "no response-scale midpoint given"
    else:
        per = values.mean(axis=1, skipna=True).dropna()
        if len(per):
            out.acquiescence = float(per.mean() - midpoint)
        else:
            out.reasons["acquiescence"] = "no answered item"
    if human_sd:
        if structure is None:
            out.reasons["variance_ratios"] = "human norms given without a scale structure"
        else:
            structure.check(values)
            out.variance_ratios = _variance_ratios(data, structure, human_sd)
    return out
