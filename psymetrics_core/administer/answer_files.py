"""The one reader of answer files that already exist (answers not produced by this run).

Two layouts, each checked against the task it is scored or analysed with:

- ratings, the long format of ``psym score`` and ``psym analyze --responses``: a CSV with
  ``respondent,item,response`` (plus any columns, one of which may group the rows). An empty
  response is missing; every other response must be a value of the item's response scale.
- generations of free-text and judged tasks: a CSV or JSONL with ``item``, ``text`` and an
  optional ``respondent``, or a run's ``samples.jsonl`` as is (its ``completion`` is the text,
  rows of other tasks are skipped, each (condition, repeat) is one respondent).

Reading is bounded (``base.reading``); a bad file or row is one ``PsymError`` line naming the
file and line. The scorers (``answers``, ``generations``) and the analysis
(``analysis.responses``) only consume the typed rows read here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core.base.errors import PsymError, ResponsesError
from psymetrics_core.base.reading import CsvTable, read_csv, read_lines, regular_file
from psymetrics_core.base.types import Instrument, Item
from psymetrics_core.instruments.item_texts import check_form

if TYPE_CHECKING:
    from psymetrics_core.administer.kinds.task import Task

__all__ = [
    "ALL",
    "RATING_COLUMNS",
    "Rating",
    "read_ratings",
    "read_ratings_table",
    "read_responses",
    "read_generations",
    "read_answer_table",
]

RATING_COLUMNS = ("respondent", "item", "response")
ALL = "all"  # the group of every row when the file is not grouped


@dataclass(frozen=True)
class Rating:
    """One row of a ratings file: who answered which item with what (None: left empty)."""

    line: int
    group: str
    respondent: str
    item: str
    response: int | None


def _existing(path: str | Path) -> Path:
    """``path`` when it is a regular file (no directory, device, FIFO or /proc entry)."""
    p = Path(path)
    try:
        regular_file(p, "responses file (CSV, --responses)")
    except FileNotFoundError:
        raise ResponsesError(f"{p}: no such file (expected a responses file)") from None
    except OSError as exc:
        raise ResponsesError(
            f"{p}: cannot read the responses file ({exc.strerror or exc})"
        ) from None
    except PsymError as exc:
        raise ResponsesError(str(exc)) from None
    return p


def _csv(p: Path, need: tuple[str, ...], expected: str) -> CsvTable:
    """The CSV at ``p`` (bounded); a missing column of ``need`` is an error on line 1."""
    table = read_csv(p, what="responses file")  # size cap, UTF-8, csv errors: one line
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise ResponsesError(
            f"{p}, line 1: missing column(s) {', '.join(missing)} (expected columns: {expected})"
        )
    return table


def read_answer_table(path: str | Path) -> CsvTable:
    """The CSV at ``path`` as read for ``--responses`` (a regular file, bounded), unchecked:
    your own survey's numbers (``analysis.population.survey``) are checked by their reader."""
    return read_csv(_existing(path), what="responses file")


def read_ratings(
    path: str | Path, inst: Instrument, form: str = "original", *, group: str | None = None
) -> list[Rating]:
    """Every row of a ratings CSV, checked against ``inst``'s ``form``.

    Unknown items, values outside the item's response scale, a respondent answering an item
    twice (within a group, when ``group`` names a column), empty respondents or groups and
    missing columns are errors naming the CSV line; a file without rows is an error too.
    """
    return read_ratings_table(path, inst, form, group=group)[0]


def read_ratings_table(
    path: str | Path, inst: Instrument, form: str = "original", *, group: str | None = None
) -> tuple[list[Rating], CsvTable]:
    """:func:`read_ratings`, with the CSV table it read (its other columns: labels)."""
    p = _existing(path)
    check_form(inst, form)
    items = {it.id: it for it in inst.forms[form]}
    need = (*RATING_COLUMNS, group) if group else RATING_COLUMNS
    table = _csv(p, need, ", ".join(need))
    out: list[Rating] = []
    seen: set[tuple[str, str, str]] = set()
    for line, row in table.rows:
        who = (row.get("respondent") or "").strip()
        item_id = (row.get("item") or "").strip()
        grp = (row.get(group) or "").strip() if group else ALL
        if not who:
            raise ResponsesError(f"{p}, line {line}: empty respondent")
        if not grp:
            raise ResponsesError(f"{p}, line {line}: empty {group!r}")
        if item_id not in items:
            raise ResponsesError(
                f"{p}, line {line}: unknown item {item_id!r} for task "
                f"'{inst.id}' (items are {_id_range(list(items))})"
            )
        value = _value(p, line, (row.get("response") or "").strip(), inst, items[item_id])
        if (grp, who, item_id) in seen:
            where = f" in {group} {grp!r}" if group else ""
            raise ResponsesError(
                f"{p}, line {line}: respondent {who!r}{where} answers item {item_id} twice"
            )
        seen.add((grp, who, item_id))
        out.append(Rating(line, grp, who, item_id, value))
    if not out:
        raise ResponsesError(f"{p}: no response rows")
    return out, table


def read_responses(
    path: str | Path, inst: Instrument, form: str = "original"
) -> dict[str, dict[str, int | None]]:
    """A ratings CSV as {respondent: {item: value}} (an empty response is None)."""
    data: dict[str, dict[str, int | None]] = {}
    for r in read_ratings(path, inst, form):
        data.setdefault(r.respondent, {})[r.item] = r.response
    return data


def _id_range(ids: list[str]) -> str:
    return f"{ids[0]}..{ids[-1]}" if len(ids) > 3 else ", ".join(ids)


def _value(p: Path, line: int, raw: str, inst: Instrument, item: Item) -> int | None:
    """The response ``raw`` as a value of ``item``'s response scale; empty is None."""
    if raw == "":
        return None
    rs = inst.response_scale_for(item)
    try:
        f = float(raw)
    except ValueError:
        f = math.nan
    if not f.is_integer() or int(f) not in rs.values():
        raise ResponsesError(
            f"{p}, line {line}: response {raw!r} to item {item.id} is not a value of its "
            f"scale ({rs.min}..{rs.max})"
        )
    return int(f)


def read_generations(path: str | Path, task: Task) -> dict[str, list[tuple[Item, str]]]:
    """{respondent: [(item, text), ...]} from a CSV or JSONL file; bad rows are one-line errors."""
    p = _existing(path)
    items = {it.id: it for it in task.load_items()}
    rows = _jsonl_rows(p) if p.suffix.lower() in (".jsonl", ".json") else _generation_csv(p)
    out: dict[str, list[tuple[Item, str]]] = {}
    seen: set[tuple[str, str]] = set()
    for line, row in rows:
        if "task" in row and row["task"] != task.id:
            continue  # a samples.jsonl of a run with several tasks
        item_id = str(row.get("item") or "").strip()
        if item_id not in items:
            raise ResponsesError(
                f"{p}, line {line}: item {item_id!r} is not an item of task '{task.id}' "
                f"(see `psym show {task.id} --json`)"
            )
        text = _text(p, line, row)
        who = _respondent(row)
        if (who, item_id) in seen:
            raise ResponsesError(f"{p}, line {line}: respondent {who!r} has item {item_id!r} twice")
        seen.add((who, item_id))
        out.setdefault(who, []).append((items[item_id], text or ""))
    if not out:
        raise ResponsesError(f"{p}: no rows for task '{task.id}'")
    return out


def _text(p: Path, line: int, row: Mapping[str, Any]) -> str | None:
    """The generated text of a row: ``text`` (a string; "" for no answer) or a samples.jsonl
    line's ``completion`` (null there: the run recorded no text, scored as unparsed)."""
    if "completion" in row:
        text = row["completion"]
        if text is not None and not isinstance(text, str):
            raise ResponsesError(f"{p}, line {line}: field 'completion' must be a string")
        return text
    text = row.get("text")
    if not isinstance(text, str):
        got = "null" if text is None else type(text).__name__
        raise ResponsesError(
            f"{p}, line {line}: field 'text' must be the generated text as a string (\"\" for "
            f"no answer), got {got}"
        )
    return text


def _respondent(row: Mapping[str, Any]) -> str:
    if row.get("respondent") not in (None, ""):
        return str(row["respondent"]).strip()
    if "condition" in row:  # a samples.jsonl line
        return f"{row['condition']}/repeat{row.get('repeat', 0)}"
    return "all"


def _generation_csv(p: Path) -> list[tuple[int, dict[str, Any]]]:
    table = _csv(p, ("item", "text"), "item, text and optionally respondent")
    return [(line, dict(row)) for line, row in table.rows]


def _jsonl_rows(p: Path) -> list[tuple[int, dict[str, Any]]]:
    """The JSON object on each non-blank line of ``p`` (read a line at a time, bounded)."""
    out = []
    for i, raw in read_lines(p, what="responses file"):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ResponsesError(f"{p}, line {i}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise ResponsesError(f"{p}, line {i}: not valid JSON (nested too deeply)") from None
        if not isinstance(row, dict):
            raise ResponsesError(f"{p}, line {i}: expected a JSON object with item and text")
        if "item" not in row or not ({"text", "completion"} & set(row)):
            raise ResponsesError(f"{p}, line {i}: expected the fields item and text")
        out.append((i, row))
    return out
