"""Per item, per scale and overall fidelity of aligned sides, with bootstrap intervals and the
human ceiling (the same metrics between two random halves of the human sample)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from psymetrics_core.analysis.fidelity import boot
from psymetrics_core.analysis.fidelity.metrics import renormalise, shares_nonsub
from psymetrics_core.analysis.fidelity.records import (
    Aligned,
    Ceiling,
    Estimate,
    ItemDistribution,
    ItemFidelity,
    ScaleFidelity,
)

__all__ = ["Point", "compute", "item_rows", "scale_row", "ceiling", "undefined_scale"]

_NO_ITEM = "no compared item has a defined distance"
_NO_NORM = (
    "SimBench's normaliser is 0 or undefined: the humans answer uniformly over the listed "
    "options on every compared item, or no item has two options"
)


@dataclass
class Point:
    """The point values (full samples) and the replicates of one comparison."""

    items: boot.ItemArrays  # (items,)
    reps: boot.ItemArrays | None  # (n_boot, items)
    norm: float
    norm_reps: np.ndarray | None


def compute(
    p: np.ndarray,
    q: np.ndarray,
    al: Aligned,
    p_reps: np.ndarray | None,
    q_reps: np.ndarray | None,
) -> Point:
    """The metrics of summed masses ``p``/``q`` (``(items, K + 3)``) and of replicates."""
    items = boot.item_arrays(p, q, al.positions, al.valid)
    reps = None
    norm_reps = None
    if p_reps is not None and q_reps is not None and len(p_reps):
        reps = boot.item_arrays(p_reps, q_reps, al.positions, al.valid)
        norm_reps = boot.norm(reps)
    return Point(items, reps, float(boot.norm(items)), norm_reps)


def _reason(al: Aligned, p: np.ndarray, q: np.ndarray, i: int) -> str:
    k = al.positions.shape[1]
    if al.options[i].span <= 0:
        return "one option (or one ordinal position): no distance is defined"
    if p[i, :k].sum() <= 0:
        return "no substantive answer on the model side (all refused, don't know or unparsed)"
    if q[i, :k].sum() <= 0:
        return "no substantive answer on the human side (all refused, don't know or unparsed)"
    return "undefined"


def _dist(al: Aligned, mass: np.ndarray, i: int, n: int) -> ItemDistribution:
    k = len(al.options[i].values)
    kk = al.positions.shape[1]
    shares = renormalise(mass[i, :k])
    nonsub = shares_nonsub(mass[i], kk)
    return ItemDistribution(
        item=al.items[i],
        options=al.options[i],
        n=n,
        shares=tuple(float(x) for x in shares),
        nonsub=tuple(float(x) for x in nonsub),
    )


def item_rows(al: Aligned, pt: Point, p: np.ndarray, q: np.ndarray) -> list[ItemFidelity]:
    """One row per compared item (SimBench per item with the data-set-level normaliser)."""
    scales_of: dict[str, list[str]] = {}
    for scale, items in al.scales.items():
        for it in items:
            scales_of.setdefault(it, []).append(scale)
    out = []
    for i, item in enumerate(al.items):
        why = _reason(al, p, q, i)

        def est(name: str, why: str = why, i: int = i) -> Estimate:
            point = float(getattr(pt.items, name)[i])
            reps = None if pt.reps is None else getattr(pt.reps, name)[:, i]
            return boot.estimate(point, reps, why)

        simb_reps = None
        if pt.reps is not None and pt.norm_reps is not None:
            simb_reps = 100.0 * (1.0 - pt.reps.tv[:, i] / pt.norm_reps)
        simb = 100.0 * (1.0 - float(pt.items.tv[i]) / pt.norm) if np.isfinite(pt.norm) else np.nan
        simb_why = why if np.isnan(pt.items.tv[i]) else _NO_NORM
        out.append(
            ItemFidelity(
                item=item,
                scales=tuple(scales_of.get(item, ())),
                n_model=int(al.model_n[i]),
                n_human=int(al.human_n[i]),
                w1=est("w1"),
                tv=est("tv"),
                simbench=boot.estimate(simb, simb_reps, simb_why),
                jsd=est("jsd"),
                ks=est("ks"),
                model=_dist(al, p, i, int(al.model_n[i])),
                human=_dist(al, q, i, int(al.human_n[i])),
            )
        )
    return out


def scale_row(name: str, pt: Point, idx: Sequence[int]) -> ScaleFidelity:
    """The means over the items ``idx`` (``name`` "overall": all compared items)."""
    point = boot.aggregate(pt.items, idx, np.asarray(pt.norm))
    reps = None
    if pt.reps is not None and pt.norm_reps is not None:
        reps = boot.aggregate(pt.reps, idx, pt.norm_reps)

    def est(field: str, reason: str = _NO_ITEM) -> Estimate:
        value = float(getattr(point, field))
        return boot.estimate(value, None if reps is None else getattr(reps, field), reason)

    simb_reason = _NO_ITEM if not np.isfinite(float(point.tv)) else _NO_NORM
    return ScaleFidelity(
        scale=name,
        items=int(point.items),
        representativeness=est("representativeness"),
        w1=est("w1"),
        tv=est("tv"),
        simbench=est("simbench", simb_reason),
        jsd=est("jsd"),
        ks=est("ks"),
    )


def undefined_scale(name: str, reason: str) -> ScaleFidelity:
    """A row whose every figure is undefined for ``reason``."""
    e = Estimate(None, reason=reason)
    return ScaleFidelity(name, 0, e, e, e, e, e, e)


def ceiling(al: Aligned, splits: int, rng: np.random.Generator, size: int | None = None) -> Ceiling:
    """The overall metrics between ``size`` random human clusters (default: half) and the
    others, ``splits`` times: their mean and 2.5-97.5 percentiles."""
    n = al.human.shape[0]
    size = n // 2 if size is None else size
    a, b = boot.halves(al.human, splits, rng, size)
    arrays = boot.item_arrays(a, b, al.positions, al.valid)
    summary = boot.aggregate(arrays, range(len(al.items)), boot.norm(arrays))

    def band(values: np.ndarray) -> Estimate:
        ok = values[np.isfinite(values)]
        if ok.size == 0:
            return Estimate(None, reason="undefined in every split of the human sample")
        low, high = np.percentile(ok, [2.5, 97.5])
        return Estimate(float(ok.mean()), float(low), float(high))

    return Ceiling(
        splits=splits,
        n_sample=size,
        n_rest=n - size,
        representativeness=band(summary.representativeness),
        simbench=band(summary.simbench),
        tv=band(summary.tv),
        jsd=band(summary.jsd),
        ks=band(summary.ks),
    )
