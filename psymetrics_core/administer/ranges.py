"""Each questionnaire scale's score range, from the scoring rule that scores it.

The range is found by scoring the two extreme respondents with the session's ``score`` hook:
the one who gives every item of the scale its lowest keyed value and the one who gives every
item its highest. A plugin that maps the mean onto another scale (the 16-type test's 0-100
toward the first pole) thus gets its own range; the core's mean scales get the response range
and its sum scales the sum of their items' ranges (``instruments.scoring.scale_range``, which
this agrees with where no plugin scores the task). A scale is left out where no fixed range
exists: an MRAT-centred scale (it depends on the respondent's other answers) or one without
items in the form.
"""

from __future__ import annotations

from typing import Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Instrument
from psymetrics_core.instruments.scoring import scale_value
from psymetrics_core.pluginsys.session import Session

__all__ = ["score_range", "scale_ranges", "range_text"]


def score_range(
    session: Session, instrument: Instrument, scale: str, form: str = "original"
) -> tuple[float, float] | None:
    """The lowest and highest score ``scale`` can take when every item is answered, as the
    session's ``score`` hook scores it; None where there is no fixed range."""
    sdef = instrument.scales.get(scale)
    if sdef is None or sdef.centre or form not in instrument.forms:
        return None
    items = instrument.scale_items(scale, form)
    if not items:
        return None
    ends = []
    for pick in (min, max):
        raw: dict[str, int | None] = {it.id: None for it in instrument.forms[form]}
        for it in items:
            keyed = {
                v: scale_value(instrument, it, scale, v)
                for v in instrument.response_scale_for(it).values()
            }
            raw[it.id] = pick(keyed, key=keyed.__getitem__)
        answers = {k: Answer(v, "ok" if v is not None else "unparsed") for k, v in raw.items()}
        scores = session.hook.score(
            instrument=instrument, responses=raw, form=form, answers=answers
        )
        got = scores.get(scale)
        value = getattr(got, "score", None)
        if not isinstance(value, int | float):
            return None
        ends.append(float(value))
    return min(ends), max(ends)


def range_text(span: tuple[float, float]) -> str:
    """A range as every screen prints it: ``1–5``, ``0–100``."""
    return f"{span[0]:g}–{span[1]:g}"


def scale_ranges(
    results: dict[str, Any], session: Session
) -> dict[tuple[str, str], tuple[float, float]]:
    """The score range of each questionnaire scale in ``results`` (task, scale -> (low,
    high)), from the installed instrument; scales without a fixed range are left out."""
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for task, entry in results["tasks"].items():
        try:
            inst = session.get_instrument(task)
        except PsymError:
            continue  # a task object given to evaluate() without a registered instrument
        if inst.kind != "questionnaire":
            continue
        form = entry.get("form") or "original"
        for scale in entry.get("scales") or {}:
            span = score_range(session, inst, scale, form)
            if span is not None:
                out[task, scale] = span
    return out
