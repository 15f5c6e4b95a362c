"""Optional scoring settings of an instrument spec, parsed and checked for ``spec.py``.

- item CSV column ``rescale``: a value map applied after reverse keying, e.g. ``1=1;2=2.5;3=4``;
- per scale: ``centre: mrat``, ``invert: true``, ``higher_is: "..."`` and ``rescale:`` (a mapping
  item id -> value map that replaces that item's ``rescale`` for this scale only, so one spec can
  score a contested recoding both ways).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import SpecError
from .types import Item, ResponseScale, ScaleDef

__all__ = ["parse_rescale", "item_rescale", "scale_options", "check_scale_rescales"]

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


def scale_options(path: Path, name: str, sd: dict[str, Any]) -> dict[str, Any]:
    """The optional ``centre``, ``invert``, ``higher_is`` and ``rescale`` settings of a scale.

    ``rescale`` is returned unparsed (item id -> text); ``check_scale_rescales`` parses it once
    the items are known.
    """
    centre = sd.get("centre")
    if centre not in (None, "mrat"):
        raise SpecError(
            path,
            f"expected 'mrat' (minus the mean rating of all scored items), got {centre!r}",
            field=f"scales.{name}.centre",
        )
    invert = sd.get("invert", False)
    if not isinstance(invert, bool):
        raise SpecError(
            path, f"expected true or false, got {invert!r}", field=f"scales.{name}.invert"
        )
    rescale = sd.get("rescale") or {}
    if not isinstance(rescale, dict):
        raise SpecError(
            path,
            "expected a mapping of item id to value map, e.g. {3: '1=1;2=4;3=2.5'}",
            field=f"scales.{name}.rescale",
        )
    return {
        "centre": centre,
        "invert": invert,
        "higher_is": str(sd.get("higher_is", "")),
        "rescale": tuple((str(k), str(v)) for k, v in rescale.items()),
    }


def check_scale_rescales(
    path: Path,
    scales: dict[str, ScaleDef],
    items: list[Item],
    rscales: dict[str, ResponseScale],
) -> dict[str, ScaleDef]:
    """``scales`` with each per-scale ``rescale`` parsed against its item's response scale."""
    from dataclasses import replace

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
