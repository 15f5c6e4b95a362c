"""Your own survey data: ``psym analyze --responses FILE`` without ``--task`` reads numeric
answers with no instrument file.

Two layouts, told apart by the header:

- wide: one row per respondent, one column per item, plus optional columns: ``respondent``
  (the id; without it each row is a respondent named by its line, ``line 2``), the ``--group``
  and ``--cluster`` columns and any other columns (labels, e.g. for ``--criterion``);
- long: ``respondent,item,response`` (the layout of ``psym score``), plus optional columns.

The items are the observed variables of ``--cfa-model`` (the names of its statements that are
not factors), or, without a model, every column but ``respondent``, ``persona``, the ``--group``
and ``--cluster`` columns and the ``--criterion`` labels (long: every item of the file). A cell
is a number, integer or continuous; an empty cell or ``NA`` (as R's ``write.csv`` writes it) is
a missing answer. Nothing is reverse-keyed (reverse-code such items in the file, as for any sum
score). The scales are the model's factors, each over its observed indicators, or, without a
model, one scale ``all`` over every item. A bad file is one ``PsymError`` naming the file, line
and column and what was expected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from psymetrics_core.administer.answer_files import ALL, RATING_COLUMNS, read_answer_table
from psymetrics_core.analysis.population.cfa_model import CFAModel
from psymetrics_core.analysis.population.data import ScaleStructure
from psymetrics_core.analysis.population.long import CLUSTER_DEFAULT, ItemKey
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import CsvTable

__all__ = [
    "ID_COLUMN",
    "MAX_ABS",
    "SURVEY_SCALE",
    "SurveyFile",
    "read_survey",
    "survey_key",
    "check_categories",
    "check_criterion",
]

ID_COLUMN = "respondent"
SURVEY_SCALE = "all"  # the one scale of a survey read without a model
MAX_ABS = 1e12  # a cell beyond this overflows the variances (rescale the column)
MISSING = ("", "NA")  # a missing answer: an empty cell, or R's write.csv NA
_EXPECT = "expected a number, or an empty cell or NA for a missing answer"
_ALL_COLUMNS = (
    "; without --cfa-model every column but respondent, persona, --group, --cluster and "
    "--criterion labels is an item"
)


@dataclass(frozen=True)
class SurveyFile:
    """One survey file read: the long frame (``group, respondent, item, response``; its index
    is the position of the frame row's table row), the CSV table, the columns that are not
    respondent labels (``skip``), the layout (wide, long) and the items in order."""

    frame: pd.DataFrame
    table: CsvTable
    skip: frozenset[str]
    layout: str
    items: tuple[str, ...]

    def line(self, k: int) -> int:
        """The CSV line of the frame's ``k``-th row."""
        return self.table.rows[int(self.frame.index[k])][0]


def _names(cols: Sequence[str], most: int = 12) -> str:
    return ", ".join(cols[:most]) + (" ..." if len(cols) > most else "") or "none"


def read_survey(
    path: str | Path,
    model: CFAModel | None = None,
    *,
    group: str | None = None,
    cluster: str | None = None,
    labels: Sequence[str] = (),
    items: Sequence[str] | None = None,
) -> SurveyFile:
    """Read ``path`` in either layout (see the module docstring); ``items``: the items the file
    must have (a second file, ``--human``: those of the first)."""
    table = read_answer_table(path)
    p = table.path
    if not table.columns or table.columns == [""]:
        raise PsymError(
            f"{p}: empty file (expected a header line naming the item columns, or "
            "respondent,item,response)"
        )
    dup = next((c for i, c in enumerate(table.columns) if c in table.columns[:i]), None)
    if dup is not None:
        raise PsymError(f"{p}, line 1: column {dup!r} appears twice (expected unique names)")
    if not table.rows:
        raise PsymError(f"{p}: no respondent rows (only the header line)")
    if group is not None and group not in table.columns:
        raise PsymError(
            f"--group {group}: {p} has no column {group!r} (columns: {_names(table.columns)})"
        )
    if set(RATING_COLUMNS) <= set(table.columns):
        return _read_long(table, model, group, items)
    not_items = {ID_COLUMN, CLUSTER_DEFAULT, *(c for c in (group, cluster) if c), *labels}
    return _read_wide(table, model, group, [c for c in table.columns if c not in not_items], items)


def _chosen(
    p: Path,
    model: CFAModel | None,
    candidates: list[str],
    what: str,
    given: Sequence[str] | None,
) -> tuple[str, ...]:
    """The items: ``given`` (all must be among ``candidates``), the model's observed names, or
    every candidate."""
    if given is not None:
        missing = [i for i in given if i not in candidates]
        if missing:
            raise PsymError(
                f"{p}: no {what} {missing[0]!r} (expected the items of --responses: "
                f"{_names(list(given))})"
            )
        return tuple(given)
    if not candidates:
        raise PsymError(
            f"{p}: no item columns (every column is the respondent id, --group, "
            "--cluster or a --criterion label)"
        )
    if model is None:
        return tuple(candidates)
    miss = model.unknown(candidates)
    if miss is not None:
        raise PsymError(
            f"--cfa-model {model.path}, line {miss[0]}: {miss[1]!r} is not a factor "
            f"of the model or an {what} of {p} ({what}s: "
            f"{_names(candidates)})"
        )
    both = next((s for s in model.statements if s.op == "=~" and s.lhs in candidates), None)
    if both is not None:
        raise PsymError(
            f"--cfa-model {model.path}, line {both.line}: factor {both.lhs!r} is named like an "
            f"{what} of {p} (expected factor names that are not {what}s)"
        )
    names = (n for s in model.statements for n in (s.lhs, *s.names))
    return tuple(dict.fromkeys(n for n in names if n not in model.factors))


def _numbers(p: Path, cells: pd.DataFrame, lines: Sequence[int], hint: str = "") -> pd.DataFrame:
    """``cells`` (text) as floats (empty: NaN); the first cell that is not a finite number of
    at most ``MAX_ABS`` is an error naming its line and column (and ``hint``)."""
    raw = cells.apply(lambda c: c.astype(str).str.strip())
    given = ~raw.isin(MISSING).to_numpy()
    nums = raw.apply(lambda c: pd.to_numeric(c, errors="coerce")).astype(float)
    v = nums.to_numpy()
    with np.errstate(invalid="ignore"):
        bad = given & ~(np.abs(v) <= MAX_ABS)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        cell = str(raw.iat[r, c])
        big = np.isfinite(v[r, c])
        what = "a number beyond ±1e12 (rescale the column)" if big else "not a number"
        raise PsymError(
            f"{p}, line {lines[r]}, column {cells.columns[c]}: {cell[:40]!r} is {what} "
            f"({_EXPECT}{'' if big else hint})"
        )
    return nums.where(given)


def _cell(p: Path, line: int, row: dict[str, str], col: str) -> str:
    value = (row.get(col) or "").strip()
    if not value:
        raise PsymError(f"{p}, line {line}: empty {col!r} (expected a value)")
    return value


def _read_wide(
    table: CsvTable,
    model: CFAModel | None,
    group: str | None,
    candidates: list[str],
    given: Sequence[str] | None,
) -> SurveyFile:
    p = table.path
    items = _chosen(p, model, candidates, "item column", given)
    lines = [line for line, _ in table.rows]
    cells = pd.DataFrame(
        [[row.get(c, "") for c in items] for _, row in table.rows],
        columns=list(items),
        dtype=object,
    )
    values = _numbers(p, cells, lines, "" if model or given else _ALL_COLUMNS).to_numpy()
    grp = [_cell(p, ln, row, group) if group else ALL for ln, row in table.rows]
    if ID_COLUMN in table.columns:
        who = [_cell(p, ln, row, ID_COLUMN) for ln, row in table.rows]
        seen: dict[tuple[str, str], int] = {}
        for ln, g, w in zip(lines, grp, who, strict=True):
            if (g, w) in seen:
                raise PsymError(
                    f"{p}, line {ln}: respondent {w!r} appears twice (line "
                    f"{seen[(g, w)]}; expected one row per respondent)"
                )
            seen[(g, w)] = ln
    else:
        who = [f"line {ln}" for ln in lines]
    n, k = values.shape
    frame = pd.DataFrame(
        {
            "group": np.repeat(grp, k),
            "respondent": np.repeat(who, k),
            "item": np.tile(np.array(items, dtype=object), n),
            "response": values.reshape(-1),
        },
        index=np.repeat(np.arange(n), k),
    )
    skip = frozenset({*items, ID_COLUMN, *([group] if group else [])})
    return SurveyFile(frame, table, skip, "wide", items)


def _read_long(
    table: CsvTable, model: CFAModel | None, group: str | None, given: Sequence[str] | None
) -> SurveyFile:
    p = table.path
    rows = table.rows
    who = [_cell(p, ln, row, "respondent") for ln, row in rows]
    item = [_cell(p, ln, row, "item") for ln, row in rows]
    grp = [_cell(p, ln, row, group) if group else ALL for ln, row in rows]
    items = _chosen(p, model, list(dict.fromkeys(item)), "item", given)
    wanted = set(items)
    keep = [k for k, i in enumerate(item) if i in wanted]
    seen: set[tuple[str, str, str]] = set()
    for k in keep:
        if (grp[k], who[k], item[k]) in seen:
            raise PsymError(
                f"{p}, line {rows[k][0]}: respondent {who[k]!r} answers item "
                f"{item[k]!r} twice (expected one row per answer)"
            )
        seen.add((grp[k], who[k], item[k]))
    cells = pd.DataFrame({"response": [rows[k][1].get("response", "") for k in keep]}, dtype=object)
    values = _numbers(p, cells, [rows[k][0] for k in keep])["response"].to_numpy()
    frame = pd.DataFrame(
        {
            "group": [grp[k] for k in keep],
            "respondent": [who[k] for k in keep],
            "item": [item[k] for k in keep],
            "response": values,
        },
        index=np.array(keep, dtype=int),
    )
    skip = frozenset({*RATING_COLUMNS, *([group] if group else [])})
    return SurveyFile(frame, table, skip, "long", items)


def survey_key(name: str, items: Sequence[str], model: CFAModel | None) -> ItemKey:
    """The key of a survey: its ``items``, and as scales the model's factors (each over its
    observed indicators) or one scale ``all``."""
    if model is None:
        return ItemKey(name, tuple(items), ScaleStructure({SURVEY_SCALE: tuple(items)}))
    wanted = set(items)
    scales: dict[str, list[str]] = {}
    for s in model.statements:
        if s.op == "=~":
            its = scales.setdefault(s.lhs, [])
            its += [n for n in s.names if n in wanted and n not in its]
    structure = ScaleStructure({f: tuple(v) for f, v in scales.items() if v})
    return ItemKey(name, tuple(items), structure)


def check_categories(sf: SurveyFile) -> None:
    """``--irt``: every answer must be an integer category (the graded response model)."""
    v = sf.frame["response"].to_numpy(dtype=float)
    bad = ~np.isnan(v) & (v != np.round(v))
    if bad.any():
        k = int(np.argmax(bad))
        col = sf.frame["item"].iat[k] if sf.layout == "wide" else "response"
        raise PsymError(
            f"--irt: {sf.table.path}, line {sf.line(k)}, column {col}: {float(v[k])!r} is "
            "not an integer category (the graded response model needs integer "
            "answer categories; continuous scores suit the CFA, EFA and "
            "reliability)"
        )


def check_criterion(pairs: Sequence[tuple[str, str]], key: ItemKey, sf: SurveyFile) -> None:
    """``--criterion SCALE=FIELD`` before any analysis: a scale of the survey and a label column
    of the file (not an item, the id or the group)."""
    for scale, fld in pairs:
        if scale not in key.structure.scales:
            raise PsymError(
                f"--criterion {scale}={fld}: {key.task} has no scale {scale!r} (scales: "
                f"{_names(list(key.structure.scales))})"
            )
        if fld not in sf.table.columns or fld in sf.skip:
            labels = [c for c in sf.table.columns if c not in sf.skip]
            raise PsymError(
                f"--criterion {scale}={fld}: the respondents have no label {fld!r} (label "
                f"columns of {sf.table.path}: {_names(labels)})"
            )
