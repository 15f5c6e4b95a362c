"""A distribution table as one side of ``psym fidelity``: ``item,option,share|count``
(``position`` optional, every other column a group label).

Each combination of the group columns is one unit (with no group column: one unit, "all"); its
shares (or counts) per item are used as given, the listed options are the item's options (a row
with share 0 lists an option nobody chose) and ``refused``, ``dont_know`` and ``unparsed`` rows
are the non-substantive shares. Shares of one item must sum to 1 within 0.01. A table is fixed:
its side is not resampled by the bootstrap (there are no respondents to draw).
"""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

from psymetrics_core.analysis.fidelity.cells import number, option_key
from psymetrics_core.analysis.fidelity.records import NONSUB, OptionSet, SideAnswers
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import CsvTable

__all__ = ["read_table", "SHARE_TOLERANCE"]

SHARE_TOLERANCE = 0.01
_RESERVED = {"item", "option", "share", "count", "position"}


def read_table(table: CsvTable) -> SideAnswers:
    """The table ``table`` (read by ``read_csv``) as one side."""
    path = table.path
    by = "share" if "share" in table.columns else "count"
    if "share" in table.columns and "count" in table.columns:
        raise PsymError(f"{path}: header has both 'share' and 'count': give one of them")
    group_cols = [c for c in table.columns if c not in _RESERVED]
    rows: list[tuple[str, str, str, float, int, float | None]] = []
    first_line: dict[tuple[str, str], int] = {}
    seen: set[tuple[str, str, str]] = set()
    per: dict[str, dict[str, str]] = {}
    for line, row in table.rows:
        where = f"{path}, line {line}"
        item, key = row["item"].strip(), option_key(row["option"])
        if not item or not row["option"].strip():
            raise PsymError(f"{where}: field '{'option' if item else 'item'}': empty")
        value = number(row[by], where, by, minimum=0)
        if by == "share" and value > 1:
            raise PsymError(f"{where}: field 'share': expected a share in 0..1, got {value:g}")
        pos = number(row["position"], where, "position") if row.get("position") else None
        unit = "|".join(row[c].strip() for c in group_cols) or "all"
        if (unit, item, key) in seen:
            raise PsymError(f"{where}: item '{item}' lists option '{key}' twice")
        seen.add((unit, item, key))
        first_line.setdefault((unit, item), line)
        per[unit] = {c: row[c].strip() for c in group_cols}
        rows.append((unit, item, key, value, line, pos))
    frame = pd.DataFrame(rows, columns=["unit", "item", "key", "mass", "line", "position"])
    if by == "share":
        _check_sums(path, frame, first_line)
    units = pd.Index(frame["unit"].unique())
    labels = pd.DataFrame.from_dict(per, orient="index", columns=group_cols, dtype=object)
    return SideAnswers(
        path=path,
        kind="distribution table",
        method="table",
        frame=frame,
        cluster=pd.Series(units, index=units),
        labels=labels.reindex(units),
        options=_options(path, frame),
        resampled=False,
        rows=len(table.rows),
    )


def _check_sums(path: object, frame: pd.DataFrame, first_line: dict[tuple[str, str], int]) -> None:
    sums = frame.groupby(["unit", "item"], sort=False)["mass"].sum()
    for (unit, item), total in sums.items():
        if abs(total - 1) > SHARE_TOLERANCE:
            line = first_line[(str(unit), str(item))]
            grp = "" if unit == "all" else f" (group {unit})"
            raise PsymError(
                f"{path}, line {line}: field 'share': the shares of item '{item}'{grp} sum to "
                f"{total:.4g}, not 1 (within {SHARE_TOLERANCE})"
            )


def _options(path: object, frame: pd.DataFrame) -> dict[str, OptionSet]:
    """Each item's listed substantive options, by position (the ``position`` column, else the
    value as a number)."""
    found: dict[str, dict[str, float]] = defaultdict(dict)
    for item, key, pos, line in frame[["item", "key", "position", "line"]].itertuples(index=False):
        if key in NONSUB:
            continue
        if pos is None or pd.isna(pos):
            try:
                pos = float(key)
            except ValueError:
                raise PsymError(
                    f"{path}, line {line}: field 'option': {key!r} is not a number; give its "
                    "ordinal place in a 'position' column"
                ) from None
        old = found[item].setdefault(key, float(pos))
        if old != pos:
            raise PsymError(
                f"{path}, line {line}: field 'position': option '{key}' of item "
                f"'{item}' has two positions ({old:g}, {pos:g})"
            )
    return {
        item: OptionSet(tuple(sorted(opts, key=opts.__getitem__)), tuple(sorted(opts.values())))
        for item, opts in found.items()
    }
