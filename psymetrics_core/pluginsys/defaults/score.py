"""Default ``score``: each answer keyed per scale by ``spec_scoring.keyed_values`` (reverse
keying, per-item or per-scale rescaling, whole-scale inversion), then mean or sum per scale,
with optional MRAT centring."""

from __future__ import annotations

from collections.abc import Mapping

from psymetrics_core.base.types import Instrument, ScaleScore
from psymetrics_core.instruments.scoring import item_value, keyed_values, mrat_term, value_range
from psymetrics_core.pluginsys.hookspecs import hookimpl

__all__ = ["score", "keyed_value", "item_value", "value_range"]


def keyed_value(instrument: Instrument, item_id: str, value: int, form: str = "original") -> float:
    """The value of ``item_id`` after reverse keying (and the item's own rescaling)."""
    item = next(it for it in instrument.forms[form] if it.id == item_id)
    return item_value(instrument, item, value)


def _mrat(instrument: Instrument, responses: Mapping[str, int | None], form: str) -> float | None:
    """The respondent's mean keyed value over every answered scored item (Schwartz's MRAT)."""
    terms = [mrat_term(instrument, it, responses.get(it.id)) for it in instrument.forms[form]]
    vals = [t for t in terms if t is not None]
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
    keyed = {
        it.id: keyed_values(instrument, form, it, responses.get(it.id))
        for it in instrument.forms[form]
    }
    for name, sdef in instrument.scales.items():
        members = instrument.scale_items(name, form)
        values: list[float] = []
        for it in members:
            if name not in keyed[it.id]:
                continue  # unanswered
            v = keyed[it.id][name]
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
