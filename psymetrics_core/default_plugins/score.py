"""Default ``score``: reverse keying (min + max - x), then mean or sum per scale."""

from __future__ import annotations

from collections.abc import Mapping

from ..hookspecs import hookimpl
from ..types import Instrument, ScaleScore

__all__ = ["score", "keyed_value"]


def keyed_value(instrument: Instrument, item_id: str, value: int, form: str = "original") -> int:
    """The value of ``item_id`` after reverse keying."""
    item = next(it for it in instrument.forms[form] if it.id == item_id)
    rs = instrument.response_scale_for(item)
    return rs.min + rs.max - value if item.reverse else value


@hookimpl(trylast=True)
def score(
    instrument: Instrument, responses: Mapping[str, int | None], form: str
) -> dict[str, ScaleScore]:
    """Score each scale over the answered items; a scale with no answers scores None."""
    out: dict[str, ScaleScore] = {}
    for name, sdef in instrument.scales.items():
        members = instrument.scale_items(name, form)
        values = []
        for it in members:
            raw = responses.get(it.id)
            if raw is None:
                continue
            rs = instrument.response_scale_for(it)
            values.append(rs.min + rs.max - raw if it.reverse else raw)
        if not values:
            value = None
        elif sdef.method == "sum":
            value = float(sum(values))
        else:
            value = sum(values) / len(values)
        out[name] = ScaleScore(name, value, len(members), len(values), sdef.method)
    return out
