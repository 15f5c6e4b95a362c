"""Optional scoring settings of an instrument spec, parsed and checked for ``spec.py``.

- item CSV column ``rescale``: a value map applied after reverse keying, e.g. ``1=1;2=2.5;3=4``;
- per scale: ``centre: mrat``, ``invert: true``, ``higher_is: "..."`` and ``rescale:`` (a mapping
  item id -> value map that replaces that item's ``rescale`` for this scale only, so one spec can
  score a contested recoding both ways).

``keyed_values`` is the one definition of an answer's keyed value on each scale: the default
``score`` hook scores with it and every questionnaire sample records it (``keyed``), so analyses
read what was scored instead of re-deriving keys. MRAT centring (``centre: mrat``) depends on the
respondent's other answers, so the recorded values are uncentred; ``mrat_term`` is what one
answer contributes to the respondent's mean rating, and analyses centre from those recorded terms.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from psymetrics_core.base.errors import SpecError
from psymetrics_core.base.types import Instrument, Item, ResponseScale, ScaleDef

__all__ = [
    "parse_rescale",
    "item_rescale",
    "check_scale_rescales",
    "item_value",
    "value_range",
    "keyed_values",
    "scale_value",
    "mrat_term",
    "centred_scales",
    "scale_range",
]

Rescale = tuple[tuple[int, float], ...]


def parse_rescale(raw: str, rs: ResponseScale) -> Rescale:
    """Parse ``1=1;2=2.5;3=4``; ValueError (one line) unless every value of ``rs`` gets a target."""
    pairs: dict[int, float] = {}
    try:
        for part in raw.split(";"):
            src, dst = part.split("=")
            pairs[int(src)] = float(dst)
    except ValueError:
        raise ValueError(
            f"expected value=target pairs such as '1=1;2=2.5;3=4', got {raw!r}"
        ) from None
    if sorted(pairs) != rs.values():
        raise ValueError(
            f"give one target for each value {rs.values()} of scale '{rs.name}', got {raw!r}"
        )
    return tuple(sorted(pairs.items()))


def item_rescale(csv_path: Path, lineno: int, raw: str, rs: ResponseScale) -> Rescale | None:
    """The ``rescale`` cell of one item CSV row (None when empty)."""
    if not raw:
        return None
    try:
        return parse_rescale(raw, rs)
    except ValueError as exc:
        raise SpecError(csv_path, str(exc), row=lineno, field="rescale") from None


def check_scale_rescales(
    path: Path,
    scales: dict[str, ScaleDef],
    items: list[Item],
    rscales: dict[str, ResponseScale],
) -> dict[str, ScaleDef]:
    """``scales`` with each per-scale ``rescale`` parsed against its item's response scale."""

    by_id = {it.id: it for it in items}
    out = dict(scales)
    for name, sdef in scales.items():
        if not sdef.rescale:
            continue
        parsed = []
        for item_id, raw in sdef.rescale:
            where = f"scales.{name}.rescale.{item_id}"
            if item_id not in by_id:
                raise SpecError(path, f"unknown item id {item_id!r}", field=where)
            try:
                parsed.append(
                    (item_id, parse_rescale(str(raw), rscales[by_id[item_id].response_scale]))
                )
            except ValueError as exc:
                raise SpecError(path, str(exc), field=where) from None
        out[name] = replace(sdef, rescale=tuple(parsed))
    return out


def item_value(
    instrument: Instrument, item: Item, raw: int, rescale: Rescale | None = None
) -> float:
    """``raw`` after reverse keying (min + max - x) and the rescale map (``rescale`` if given,
    else the item's own), if any."""
    rs = instrument.response_scale_for(item)
    x = rs.min + rs.max - raw if item.reverse else raw
    rmap = rescale or item.rescale
    if not rmap:
        return float(x)
    table = dict(rmap)
    if x not in table:
        raise ValueError(f"item {item.id}: value {raw} is not one of {sorted(table)}")
    return float(table[x])


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


def keyed_values(
    instrument: Instrument, form: str, item: Item, value: int | None
) -> dict[str, float]:
    """The answer ``value`` to ``item`` keyed for every scale it counts towards.

    Per scale: reverse keying (min + max - x), then the scale's rescale map for the item if the
    scale has one, else the item's own ``rescale``, then ``invert`` (lo + hi - v over the
    item's value range). MRAT centring is NOT applied (it needs the respondent's other
    answers): see ``mrat_term``. Empty for an unanswered (None) or unscored item. The keying
    is the same in every ``form`` (``spec`` checks that forms agree).
    """
    if value is None or not item.scored:
        return {}
    return {
        name: scale_value(instrument, item, name, value)
        for name in instrument.scales
        if instrument.counts_towards(item, name)
    }


def scale_value(instrument: Instrument, item: Item, scale: str, value: int) -> float:
    """The keyed value of answer ``value`` to ``item`` as it enters ``scale``: reverse keying
    and item rescale, the scale's own rescale override, then its inversion."""
    sdef = instrument.scales[scale]
    override = dict(sdef.rescale).get(item.id)
    v = item_value(instrument, item, value, override)
    if sdef.invert:
        lo, hi = value_range(instrument, item, override)
        v = lo + hi - v
    return v


def mrat_term(instrument: Instrument, item: Item, value: int | None) -> float | None:
    """What the answer contributes to the respondent's MRAT (Schwartz's mean rating over all
    scored items): the value after reverse keying and the item's own rescale; None for an
    unanswered or unscored item."""
    if value is None or not item.scored:
        return None
    return item_value(instrument, item, value)


def centred_scales(instrument: Instrument) -> list[str]:
    """The scales scored minus the respondent's MRAT (``centre: mrat``)."""
    return [name for name, sdef in instrument.scales.items() if sdef.centre == "mrat"]


def scale_range(
    instrument: Instrument, scale: str, form: str = "original"
) -> tuple[float, float] | None:
    """The lowest and highest score ``scale`` can take when every item is answered: the mean
    (or sum) of its items' keyed value ranges. None where there is no fixed range: an
    MRAT-centred scale, a scale without items in ``form``, or a method other than mean/sum."""
    sdef = instrument.scales[scale]
    if sdef.centre or sdef.method not in ("mean", "sum") or form not in instrument.forms:
        return None
    bounds = [
        value_range(instrument, it, dict(sdef.rescale).get(it.id))
        for it in instrument.scale_items(scale, form)
    ]
    if not bounds:
        return None
    lo, hi = sum(b[0] for b in bounds), sum(b[1] for b in bounds)
    if sdef.method == "mean":
        lo, hi = lo / len(bounds), hi / len(bounds)
    return lo, hi
