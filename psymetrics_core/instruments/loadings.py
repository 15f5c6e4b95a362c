"""Published human factor loadings of an instrument: ``human_loadings:`` in ``instrument.yaml``.

::

    human_loadings:
      file: loadings.csv          # item,<factor1>,<factor2>,...
      source: "Author (2001), Table 3"
      rotation: oblimin           # optional: as published
      method: ml                  # optional: as published
      n: 1234                     # optional: the published sample size

The CSV's first column is ``item`` (ids of the instrument's scored items, each at most once),
then one column per factor (named, unique); every cell is a number in [-1.5, 1.5] (a blank is
not a zero: tables that hide small loadings must be completed from the source). Loadings are in
the items' raw direction, as published: a reverse-keyed item keeps its negative loading.
Every error is one ``SpecError`` line naming the file, the CSV line and the column.
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

from psymetrics_core.base.errors import SpecError
from psymetrics_core.base.reading import InputError, read_csv, read_text, regular_file
from psymetrics_core.base.types import HumanLoadings, Item
from psymetrics_core.instruments.schema import HumanLoadingsSpec

__all__ = ["LOADING_BOUND", "parse_human_loadings"]

LOADING_BOUND = 1.5  # |loading| above this is a typo (standardized loadings are about <= 1)
_FIELD = "human_loadings.file"


def parse_human_loadings(
    spec_path: Path, spec: HumanLoadingsSpec, items: list[Item]
) -> HumanLoadings:
    """The validated loadings table of ``spec`` (``items``: the original form's items)."""
    csv_path = _table_file(spec_path, spec.file)
    try:
        table = read_csv(csv_path, what="human loadings")
    except InputError as exc:  # "PATH, line N: why" or "PATH: why", as one SpecError
        m = re.match(r", line (\d+): (.*)", str(exc).removeprefix(str(csv_path)), re.S)
        if m is not None:
            raise SpecError(csv_path, m.group(2), row=int(m.group(1))) from None
        raise SpecError(csv_path, str(exc).removeprefix(f"{csv_path}: ")) from None
    factors = _factors(csv_path, table.columns)
    _check_widths(csv_path, len(table.columns))
    known = {it.id: it for it in items}
    rows: list[tuple[str, tuple[float, ...]]] = []
    for line, row in table.rows:
        item = (row.get("item") or "").strip()
        if not item:
            raise SpecError(csv_path, "empty item id", row=line, field="item")
        if item not in known:
            raise SpecError(
                csv_path, f"item {item!r} is not an item of the instrument", row=line, field="item"
            )
        if not known[item].scored:
            why = f"item {item!r} is not scored ({known[item].flag or 'no scale'})"
            raise SpecError(csv_path, why, row=line, field="item")
        if any(i == item for i, _ in rows):
            raise SpecError(csv_path, f"item {item!r} is listed twice", row=line, field="item")
        rows.append((item, tuple(_loading(csv_path, line, f, row.get(f)) for f in factors)))
    if not rows:
        raise SpecError(csv_path, "holds no loadings (expected one row per item)")
    for j, f in enumerate(factors):
        if all(v[j] == 0 for _, v in rows):
            raise SpecError(csv_path, "every loading of this factor is 0", field=f)
    return HumanLoadings(
        source=spec.source,
        file=spec.file,
        factors=factors,
        loadings=tuple(rows),
        rotation=spec.rotation,
        method=spec.method,
        n=spec.n,
        note=spec.note.strip(),
    )


def _table_file(spec_path: Path, rel: str) -> Path:
    """The loadings CSV: a regular file beside the spec, else one error naming the field."""
    csv_path = spec_path.parent / rel
    try:
        regular_file(csv_path, "CSV file of human loadings")
    except FileNotFoundError:
        raise SpecError(spec_path, f"loadings file {rel!r} not found", field=_FIELD) from None
    except OSError as exc:
        why = f"cannot read {rel!r} ({exc.strerror or exc})"
        raise SpecError(spec_path, why, field=_FIELD) from None
    except InputError as exc:
        why = str(exc).removeprefix(f"{csv_path}: ")
        raise SpecError(spec_path, f"{rel!r}: {why}", field=_FIELD) from None
    return csv_path


def _factors(csv_path: Path, columns: list[str]) -> tuple[str, ...]:
    """The factor names of the header ``item,<factor>,...`` (named, unique)."""
    if not columns or columns[0] != "item":
        got = columns[0] if columns else "nothing"
        raise SpecError(csv_path, f"the first column must be 'item', got {got!r}"[:200], row=1)
    factors = columns[1:]
    if not factors:
        raise SpecError(
            csv_path, "no factor columns (expected item,<factor1>,<factor2>,...)", row=1
        )
    for j, f in enumerate(factors, 2):
        if not f:
            raise SpecError(csv_path, f"column {j} has no factor name", row=1)
        if f == "item" or factors.count(f) > 1:
            raise SpecError(csv_path, f"factor {f!r} is named twice", row=1, field=f)
    return tuple(factors)


def _check_widths(csv_path: Path, width: int) -> None:
    """A row with more cells than the header has a loading without a factor (read_csv would
    drop it): one error naming the line. (The table was read once already: it is valid CSV.)"""
    reader = csv.reader(io.StringIO(read_text(csv_path, what="human loadings"), newline=""))
    for record in reader:
        if len(record) > width and any(c.strip() for c in record[width:]):
            raise SpecError(
                csv_path,
                f"{len(record)} cells for {width} columns (a loading without a factor column)",
                row=reader.line_num,
            )


def _loading(csv_path: Path, line: int, factor: str, cell: str | None) -> float:
    """One cell as a finite number in [-LOADING_BOUND, LOADING_BOUND]."""
    text = (cell or "").strip()
    if not text:
        raise SpecError(
            csv_path,
            "empty loading (a blank is not 0: give every loading, small ones too)",
            row=line,
            field=factor,
        )
    try:
        value = float(text)
    except ValueError:
        raise SpecError(
            csv_path, f"expected a number, got {text[:40]!r}", row=line, field=factor
        ) from None
    if not math.isfinite(value) or abs(value) > LOADING_BOUND:
        raise SpecError(
            csv_path,
            f"expected a finite loading in [-{LOADING_BOUND}, {LOADING_BOUND}], got {text[:40]!r}",
            row=line,
            field=factor,
        )
    return value
