"""Default ``score``: reverse keying (min + max - x), optional per-item (or per-scale) rescaling,
then mean or sum per scale, with optional whole-scale inversion and MRAT centring."""

from __future__ import annotations

from collections.abc import Mapping

from ..hookspecs import hookimpl
from ..types import Instrument, Item, ScaleScore

__all__ = ["score", "keyed_value", "item_value", "value_range"]

Rescale = tuple[tuple[int, float], ...]


def item_value(
    instrument: Instrument, item: Item, raw: int, rescale: Rescale | None = None
) -> float:
    """``raw`` after reverse keying (min + max - x) and the rescale map (``rescale`` if given,
    else the item's own), if any."""
    rs = instrument.response_scale_for(item)
    x = rs.min + rs.max - raw if item.reverse else raw
    rmap = rescale or item.rescale
    return dict(rmap)[x] if rmap else float(x)


def value_range(
    instrument: Instrument, item: Item, rescale: Rescale | None = None
) -> tuple[float, float]:
    """The lowest and highest value ``item_value`` can give for ``item``."""
    rmap = rescale or item.rescale
    if rmap:
        targets = [t for _, t in rmap]
        return min(targets), max(targets)
    rs = instrument.response_scale_for(item)
    return float(rs.min), float(rs.max)


def keyed_value(instrument: Instrument, item_id: str, value: int, form: str = "original") -> float:
    """The value of ``item_id`` after reverse keying (and rescaling)."""
    item = next(it for it in instrument.forms[form] if it.id == item_id)
    return item_value(instrument, item, value)


def _mrat(instrument: Instrument, responses: Mapping[str, int | None], form: str) -> float | None:
    """The respondent's mean keyed value over every answered scored item (Schwartz's MRAT)."""
    vals = [
        item_value(instrument, it, raw)
        for it in instrument.forms[form]
        if it.scored and (raw := responses.get(it.id)) is not None
    ]
    return sum(vals) / len(vals) if vals else None


@hookimpl(trylast=True)
def score(
    instrument: Instrument, responses: Mapping[str, int | None], form: str
) -> dict[str, ScaleScore]:
    """Score each scale over the answered items; a scale with no answers scores None."""
    out: dict[str, ScaleScore] = {}
    mrat = None
    if any(s.centre == "mrat" for s in instrument.scales.values()):
        mrat = _mrat(instrument, responses, form)
    for name, sdef in instrument.scales.items():
        members = instrument.scale_items(name, form)
        overrides = dict(sdef.rescale)
        values: list[float] = []
        for it in members:
            raw = responses.get(it.id)
            if raw is None:
                continue
            v = item_value(instrument, it, raw, overrides.get(it.id))
            if sdef.invert:
                lo, hi = value_range(instrument, it, overrides.get(it.id))
                v = lo + hi - v
            if sdef.centre == "mrat" and mrat is not None:
                v -= mrat
            values.append(v)
        value: float | None
        if not values:
            value = None
        elif sdef.method == "sum":
            value = float(sum(values))
        else:
            value = sum(values) / len(values)
        out[name] = ScaleScore(name, value, len(members), len(values), sdef.method)
    return out
