"""Item texts supplied by the user, for instruments whose licence keeps texts out of the plugin.

Such an instrument's spec says ``item_texts: user`` and ships only its key (ids, scales, reverse
keying). The user gives a CSV with columns ``id,text`` (``psym eval --items TASK=FILE``), and
optionally ``question``: the item as an open question, asked by the interview conditions
(``--condition interview``); given, the column needs a question on every line.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from psymetrics_core.base.errors import PsymError, SpecError
from psymetrics_core.base.reading import read_csv, regular_file
from psymetrics_core.base.types import Instrument

__all__ = [
    "apply_item_texts",
    "parse_items_option",
    "require_item_texts",
    "check_form",
    "check_item_files",
]


def parse_items_option(values: tuple[str, ...] | list[str]) -> dict[str, Path]:
    """Parse repeated ``TASK[:FORM]=PATH`` options into {"task" or "task:form": path}."""
    out: dict[str, Path] = {}
    for v in values:
        if "=" not in v:
            raise PsymError(f"--items expects TASK=PATH (or TASK:FORM=PATH), got {v!r}")
        key, path = (x.strip() for x in v.split("=", 1))
        if not key or not path:
            raise PsymError(f"--items expects TASK=PATH (or TASK:FORM=PATH), got {v!r}")
        if key in out:
            raise PsymError(f"--items {key} is given twice")
        out[key] = Path(path)
    return out


def apply_item_texts(inst: Instrument, path: str | Path, form: str = "original") -> Instrument:
    """A copy of ``inst`` whose ``form`` items take their texts from the CSV at ``path``.

    Every item of the form must get a non-empty text; unknown ids are errors naming the line.
    An optional ``question`` column gives each item its open question (the interview's); when
    the file has the column, every line's question must be non-empty.
    """
    p = Path(path)
    what = f"CSV file of item texts (--items {inst.id}=FILE)"
    try:
        regular_file(p, what)  # no directory, device, FIFO or /proc entry
    except FileNotFoundError:
        raise SpecError(p, f"item text file not found (--items {inst.id}=FILE)") from None
    except OSError as exc:
        raise SpecError(p, f"cannot read the {what} ({exc.strerror or exc})") from None
    if form not in inst.forms:
        raise PsymError(f"task '{inst.id}' has no form '{form}' (forms: {', '.join(inst.forms)})")
    known = {it.id for it in inst.forms[form]}
    texts: dict[str, str] = {}
    questions: dict[str, str] = {}
    table = read_csv(p, what="item text file")
    for col in ("id", "text"):
        if col not in table.columns:
            raise SpecError(p, f"missing column '{col}' (expected columns id,text)", row=1)
    asks = "question" in table.columns
    for line, row in table.rows:
        item_id = (row.get("id") or "").strip()
        text = (row.get("text") or "").strip()
        if item_id not in known:
            raise SpecError(
                p, f"unknown item id {item_id!r} for task '{inst.id}'", row=line, field="id"
            )
        if not text:
            raise SpecError(p, "empty item text", row=line, field="text")
        if item_id in texts:
            raise SpecError(p, f"item {item_id} appears twice", row=line, field="id")
        texts[item_id] = text
        if asks:
            questions[item_id] = _question(p, line, row.get("question"))
    missing = [i for i in known if i not in texts]
    if missing:
        raise SpecError(p, f"no text for item(s) {', '.join(sorted(missing, key=_num))}")
    items = [
        replace(it, text=texts[it.id], question=questions.get(it.id, it.question))
        for it in inst.forms[form]
    ]
    return replace(inst, forms={**inst.forms, form: items})


def _question(path: Path, line: int, value: str | None) -> str:
    """A line's ``question``: non-empty (the interview asks it as the item's open question)."""
    question = (value or "").strip()
    if not question:
        raise SpecError(
            path,
            "empty question (the item as an open question, e.g. 'Are you talkative?'; "
            "the interview asks it)",
            row=line,
            field="question",
        )
    return question


def require_item_texts(
    inst: Instrument, form: str, item_files: Mapping[str, str | Path] | None = None
) -> Instrument:
    """``inst`` with user texts applied where given; an error if ``form`` still lacks texts."""
    files = item_files or {}
    check_form(inst, form)
    path = files.get(f"{inst.id}:{form}") or (files.get(inst.id) if form == "original" else None)
    option = inst.extra.get("item_file_option")  # a task that reads its own item file
    if path is not None and option:
        return replace(inst, extra={**inst.extra, "item_file": str(path)})
    if path is not None:
        inst = apply_item_texts(inst, path, form)
    if any(not it.text for it in inst.forms[form]):
        raise PsymError(
            f"task '{inst.id}' ships no item texts ({inst.license_status}); supply them with "
            f"--items {inst.id}{'' if form == 'original' else ':' + form}=FILE.csv "
            "(columns id,text[,question])"
        )
    return inst


def check_form(inst: Instrument, form: str) -> None:
    """A one-line error when ``inst`` has no form ``form``."""
    if form not in inst.forms:
        raise PsymError(
            f"--form {form}: task '{inst.id}' has no such form (forms: {', '.join(inst.forms)})"
        )


def check_item_files(tasks: Sequence[str], item_files: Mapping[str, object] | None) -> None:
    """Every ``--items TASK[:FORM]=FILE`` must name a task of this run (typos are errors)."""
    for key in item_files or {}:
        task = key.partition(":")[0]
        if task not in tasks:
            close = difflib.get_close_matches(task, list(tasks), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise PsymError(
                f"--items {key}=...: '{task}' is not among --tasks ({', '.join(tasks)}){hint}"
            )


def _num(item_id: str) -> tuple[int, str]:
    return (int(item_id), "") if item_id.isdigit() else (10**9, item_id)
