"""Score existing responses (human data or earlier model answers) from a long-format CSV."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core.base.errors import ResponsesError
from psymetrics_core.base.reading import read_csv
from psymetrics_core.base.types import Answer, Instrument
from psymetrics_core.instruments.item_texts import check_form

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["read_responses", "score_responses"]

COLUMNS = ("respondent", "item", "response")


def read_responses(
    path: str | Path, inst: Instrument, form: str = "original"
) -> dict[str, dict[str, int | None]]:
    """Read ``respondent,item,response`` rows into {respondent: {item: value}}.

    An empty response is missing (None). Unknown items, values outside the item's response
    scale, duplicates and missing columns are errors naming the CSV line.
    """
    p = Path(path)
    if not p.is_file():
        raise ResponsesError(f"{p}: no such file")
    check_form(inst, form)
    items = {it.id: it for it in inst.forms[form]}
    data: dict[str, dict[str, int | None]] = {}
    table = read_csv(p, what="responses file")
    cols = table.columns
    missing = [c for c in COLUMNS if c not in cols]
    if missing:
        raise ResponsesError(
            f"{p}, line 1: missing column(s) {', '.join(missing)} "
            f"(expected columns: {', '.join(COLUMNS)})"
        )
    for line, row in table.rows:
        who = (row.get("respondent") or "").strip()
        item_id = (row.get("item") or "").strip()
        raw = (row.get("response") or "").strip()
        if not who:
            raise ResponsesError(f"{p}, line {line}: empty respondent")
        if item_id not in items:
            raise ResponsesError(
                f"{p}, line {line}: unknown item {item_id!r} for task "
                f"'{inst.id}' (items are {_id_range(list(items))})"
            )
        rs = inst.response_scale_for(items[item_id])
        value: int | None
        if raw == "":
            value = None
        else:
            try:
                value = int(float(raw)) if float(raw).is_integer() else None
            except ValueError:
                value = None
            if value is None or value not in rs.values():
                raise ResponsesError(
                    f"{p}, line {line}: response {raw!r} to item {item_id} "
                    f"is not a value of its scale ({rs.min}..{rs.max})"
                )
        answers = data.setdefault(who, {})
        if item_id in answers:
            raise ResponsesError(
                f"{p}, line {line}: respondent {who!r} answers item {item_id} twice"
            )
        answers[item_id] = value
    if not data:
        raise ResponsesError(f"{p}: no response rows")
    return data


def _id_range(ids: list[str]) -> str:
    return f"{ids[0]}..{ids[-1]}" if len(ids) > 3 else ", ".join(ids)


def score_responses(
    task: str, path: str | Path, session: Session, form: str = "original"
) -> dict[str, dict[str, Any]]:
    """Scale scores per respondent: {respondent: {scale: {score, n_items, n_answered}}}, with
    ``task`` and the scoring hooks of ``session``."""
    inst = session.get_instrument(task)
    hook = session.hook
    out: dict[str, dict[str, Any]] = {}
    for who, answers in read_responses(path, inst, form).items():
        given = {k: Answer(v, "ok") for k, v in answers.items()}
        scores = hook.score(instrument=inst, responses=answers, form=form, answers=given)
        out[who] = {
            name: {"score": s.score, "n_items": s.n_items, "n_answered": s.n_answered}
            for name, s in scores.items()
        }
    return out
