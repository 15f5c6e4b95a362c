"""The population against people: variance ratio per scale against the instrument's human
norms, acquiescence against the response scale's midpoint, and the score distributions the
report draws against the norm.

The norm group is the instrument's default (the first group its spec lists, as ``psym eval``
and ``psym analyze`` use by default); its source goes with every number. A variance ratio far
below 1 (``FLAT_RATIO``) is the straight-lining signature of LLM populations: the personas
barely move the answers. Acquiescence is the mean over respondents of each respondent's mean
raw (not reverse-keyed) answer to the scored items of the scales, minus the response scale's
midpoint ((min + max) / 2): positive = agreeing whatever the keying. A scale scored as a mean
but administered in part (``--limit``) keeps its ratio: a mean over fewer items spreads more,
so such a ratio tends to exceed the full scale's.

Scale scores are item means of the keyed items (``diagnostics.scale_scores``); a scale the
instrument scores as a sum is put on the sum metric (x number of items) when every item of it
was administered, otherwise its norm is not comparable and the ratio is None with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.diagnostics import diagnose, scale_scores
from psymetrics_core.analysis.population.entry import Distribution, HumanParts, Norm, VarianceRatio
from psymetrics_core.base.types import Instrument

__all__ = [
    "FLAT_RATIO",
    "NO_NORMS",
    "NO_INSTRUMENT",
    "ScaleNorm",
    "human_diagnostics",
    "scale_norms",
    "midpoint",
]

FLAT_RATIO = 0.25  # variance ratio below this (SD under half the human SD) is flagged
NO_NORMS = "no human norms for this instrument"
NO_INSTRUMENT = "no instrument: your own survey has no human norms"


@dataclass(frozen=True)
class ScaleNorm:
    """A scale's norm in the default group, and the factor from item means to its metric."""

    mean: float
    sd: float
    source: str
    group: str
    factor: float | None  # None: the population's scores are not on the norm's metric
    reason: str | None = None


def scale_norms(
    inst: Instrument | None, structure: ScaleStructure, form: str
) -> dict[str, ScaleNorm | str]:
    """Per scale of ``structure``: its norm in the instrument's default group, or the reason
    there is none."""
    if inst is None:
        return {s: NO_INSTRUMENT for s in structure.scales}
    groups = inst.norm_groups()
    if not groups:
        return {s: NO_NORMS for s in structure.scales}
    group = groups[0]
    out: dict[str, ScaleNorm | str] = {}
    for scale, items in structure.scales.items():
        sdef = inst.scales.get(scale)
        norm = None if sdef is None else next((g for g in sdef.norms if g.group == group), None)
        if sdef is None or norm is None:
            out[scale] = f"no norm for this scale in the group {group!r}"
            continue
        factor: float | None = 1.0
        why = None
        if (
            sdef.centre
            or sdef.invert
            or sdef.rescale
            or any(it.rescale for it in inst.forms[form] if it.id in items)
        ):
            factor, why = None, "the scale's scoring (centring or rescaling) is not an item mean"
        elif sdef.method == "sum":
            full = len(inst.scale_items(scale, form))
            if len(items) < full:
                factor = None
                why = f"scored as a sum of {full} items; {len(items)} administered"
            else:
                factor = float(full)
        out[scale] = ScaleNorm(norm.mean, norm.sd, norm.source, group, factor, why)
    return out


def midpoint(inst: Instrument | None, items: Sequence[str], form: str) -> tuple[float | None, str]:
    """The midpoint (min + max) / 2 of the response scale the ``items`` are answered on, or
    None with the reason (no instrument, or scales with different midpoints)."""
    if inst is None:
        return None, "no instrument: your own survey has no response-scale midpoint"
    wanted = set(items)
    mids: dict[float, list[str]] = {}
    for it in inst.forms[form]:
        if it.id in wanted:
            rs = inst.response_scale_for(it)
            mids.setdefault((rs.min + rs.max) / 2, []).append(rs.name)
    if not mids:
        return None, "no scored item"
    if len(mids) > 1:
        shown = ", ".join(f"{sorted(set(n))[0]} {m:g}" for m, n in sorted(mids.items()))
        return None, f"items are answered on response scales with different midpoints ({shown})"
    return next(iter(mids)), ""


def human_diagnostics(
    resp: Responses, structure: ScaleStructure, inst: Instrument | None, form: str
) -> HumanParts:
    """The task entry's variance ratios, acquiescence (None with the reason) and score
    distributions (see the module docstring)."""
    norms = scale_norms(inst, structure, form)
    usable = {s: n for s, n in norms.items() if isinstance(n, ScaleNorm) and n.factor}
    mid, mid_why = midpoint(inst, structure.items(), form)
    scored = Responses(resp.values.loc[:, structure.items()], resp.cluster)
    diag = diagnose(
        scored,
        structure,
        midpoint=mid,
        human_sd={s: n.sd / (n.factor or 1.0) for s, n in usable.items()},
    )
    ratios = {v.scale: v for v in diag.variance_ratios}
    scores = scale_scores(scored, structure)
    out_ratio, dists = [], {}
    for scale, norm in norms.items():
        s = np.sort(scores[scale][~np.isnan(scores[scale])])
        factor = norm.factor if isinstance(norm, ScaleNorm) else None
        psd = float(np.std(s * (factor or 1.0), ddof=1)) if len(s) > 1 else None
        ratio, reason = None, norm if isinstance(norm, str) else norm.reason
        if scale in ratios:
            ratio, reason = ratios[scale].ratio, ratios[scale].reason
        out_ratio.append(
            VarianceRatio(
                scale, ratio, psd, norm.sd if isinstance(norm, ScaleNorm) else None, reason
            )
        )
        dists[scale] = Distribution(
            [float(x) for x in s * (factor or 1.0)],
            None
            if not isinstance(norm, ScaleNorm) or factor is None
            else Norm(norm.mean, norm.sd, norm.source, norm.group),
        )
    why = mid_why or diag.reasons.get("acquiescence")
    return HumanParts(
        out_ratio, diag.acquiescence, None if diag.acquiescence is not None else why, dists
    )


def human_text(h: HumanParts) -> list[str]:
    """The lines of ``task_text`` for the variance ratios and acquiescence."""
    rows = h.variance_ratio
    used = [d.norm for d in h.distributions.values() if d.norm is not None]
    sources = sorted({n.source for n in used})
    groups = sorted({n.group for n in used})
    out = []
    if rows and len({r.reason for r in rows}) == 1 and rows[0].reason in (NO_NORMS, NO_INSTRUMENT):
        out.append(f"  variance ratio vs human norms: undefined ({rows[0].reason})")
    elif rows:
        parts = [
            f"{r.scale} — ({r.reason})"
            if r.ratio is None
            else f"{r.scale} {r.ratio:.2f}" + (" FLAT" if r.ratio < FLAT_RATIO else "")
            for r in rows
        ]
        head = f"group {', '.join(groups)}: {'; '.join(sources)}" if groups else "no norm used"
        out.append(f"  variance ratio vs human norms ({head}): " + ", ".join(parts))
        if any(r.ratio is not None and r.ratio < FLAT_RATIO for r in rows):
            out.append(
                f"    FLAT: below {FLAT_RATIO} (SD under half the human SD), the "
                "straight-lining signature: personas barely move the answers"
            )
    a = h.acquiescence
    out.append(
        "  acquiescence (mean raw answer - scale midpoint): "
        + (f"{a:+.2f}" if a is not None else f"— ({h.acquiescence_reason})")
    )
    return out
