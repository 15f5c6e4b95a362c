"""Readers of the two CSV inputs of ``psym fidelity``: an answers file (long:
``respondent,item,response[,weight][,position][,label columns]``; or wide: a ``respondent``
column and one column per item, as R psychTools' ``bfi`` exports) and a distribution table
(``item,option,share|count[,position][,group columns]``).

A response is an option value as written (``3`` and ``3.0`` are the same option), one of the
non-substantive answers ``refused``, ``dont_know`` (or ``don't know``) and ``unparsed``, or
empty: not answered (counted as unparsed, kept apart like a refusal). A malformed cell is one
``PsymError`` line naming the file, line and field.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pandas as pd

from psymetrics_core.analysis.fidelity.cells import number, option_key
from psymetrics_core.analysis.fidelity.records import SideAnswers
from psymetrics_core.analysis.fidelity.table import read_table
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import CsvTable, read_csv

__all__ = ["read_csv_side"]

_RESERVED = {"respondent", "item", "response", "weight", "position", "option", "share", "count"}


def read_csv_side(
    path: Path, known_items: Collection[str] | None, groups: Collection[str]
) -> SideAnswers:
    """The answers file or distribution table at ``path`` (chosen by its header)."""
    table = read_csv(path, what="answers file")
    cols = set(table.columns)
    if not table.rows:
        raise PsymError(f"{path}: no rows (expected answers or a distribution table)")
    if {"item", "option"} <= cols and cols & {"share", "count"}:
        return read_table(table)
    if {"respondent", "item", "response"} <= cols:
        return _long(table)
    if "respondent" in cols:
        return _wide(table, known_items, groups)
    raise PsymError(
        f"{path}: header {', '.join(table.columns)[:200]}: expected respondent,item,response "
        "(long answers), respondent and one column per item (wide answers), or "
        "item,option,share|count (a distribution table)"
    )


def _labels(
    path: Path,
    per: dict[str, dict[str, str]],
    unit: str,
    row: dict[str, str],
    cols: list[str],
    line: int,
) -> None:
    """Record ``unit``'s label cells, refusing a label that changes within the respondent."""
    seen = per.setdefault(unit, {})
    for c in cols:
        value = row[c].strip()
        if seen.setdefault(c, value) != value:
            raise PsymError(
                f"{path}, line {line}: field '{c}': respondent '{unit}' has more than one "
                f"'{c}' value ({seen[c]!r}, {value!r})"
            )


def _long(table: CsvTable) -> SideAnswers:
    path = table.path
    label_cols = [c for c in table.columns if c not in _RESERVED]
    rows: list[tuple[str, str, str, float, int, float | None]] = []
    per: dict[str, dict[str, str]] = {}
    seen: set[tuple[str, str]] = set()
    for line, row in table.rows:
        where = f"{path}, line {line}"
        unit, item = row["respondent"].strip(), row["item"].strip()
        if not unit or not item:
            raise PsymError(f"{where}: field '{'item' if unit else 'respondent'}': empty")
        if (unit, item) in seen:
            raise PsymError(f"{where}: respondent '{unit}' answers item '{item}' twice")
        seen.add((unit, item))
        weight = number(row["weight"], where, "weight", minimum=0) if row.get("weight") else 1.0
        pos = number(row["position"], where, "position") if row.get("position") else None
        rows.append((unit, item, option_key(row["response"]), weight, line, pos))
        _labels(path, per, unit, row, label_cols, line)
    frame = pd.DataFrame(rows, columns=["unit", "item", "key", "mass", "line", "position"])
    return _side(path, frame, per, label_cols, len(table.rows))


def _wide(table: CsvTable, known: Collection[str] | None, groups: Collection[str]) -> SideAnswers:
    path = table.path
    skip = {"respondent", "weight", *groups}
    items = [c for c in table.columns if c not in skip and (known is None or c in known)]
    label_cols = [c for c in table.columns if c not in items and c not in ("respondent", "weight")]
    if not items:
        raise PsymError(
            f"{path}: no item columns (wide answers: a respondent column and one "
            "column per item, named as the instrument's items)"
        )
    rows: list[tuple[str, str, str, float, int, float | None]] = []
    per: dict[str, dict[str, str]] = {}
    for line, row in table.rows:
        where = f"{path}, line {line}"
        unit = row["respondent"].strip()
        if not unit:
            raise PsymError(f"{where}: field 'respondent': empty")
        if unit in per:
            raise PsymError(f"{where}: respondent '{unit}' appears twice")
        weight = number(row["weight"], where, "weight", minimum=0) if row.get("weight") else 1.0
        per[unit] = {c: row[c].strip() for c in label_cols}
        rows += [(unit, it, option_key(row[it]), weight, line, None) for it in items]
    frame = pd.DataFrame(rows, columns=["unit", "item", "key", "mass", "line", "position"])
    return _side(path, frame, per, label_cols, len(table.rows))


def _side(
    path: Path,
    frame: pd.DataFrame,
    per: dict[str, dict[str, str]],
    label_cols: list[str],
    n_rows: int,
) -> SideAnswers:
    labels = pd.DataFrame.from_dict(per, orient="index", columns=label_cols, dtype=object)
    units = pd.Index(frame["unit"].unique())
    return SideAnswers(
        path=path,
        kind="answers",
        method="answers",
        frame=frame,
        cluster=pd.Series(units, index=units),
        labels=labels.reindex(units),
        rows=n_rows,
    )
