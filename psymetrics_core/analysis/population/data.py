"""The inputs of the population analyses: a respondent x item matrix and a scale structure.

``from_long`` takes a tidy table (one row per respondent and item, optional group and
persona-cluster columns); ``from_wide`` a respondent x item matrix. A :class:`ScaleStructure`
says which items make each scale and which are reverse-keyed (with the response range used
to reverse them, x' = min + max - x); ``ScaleStructure.from_instrument`` reads it from a
loaded instrument. Bad input raises :class:`PsymError` naming the column or rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from psymetrics_core.base.errors import PsymError

if TYPE_CHECKING:
    from psymetrics_core.base.types import Instrument

__all__ = ["Responses", "ScaleStructure", "from_long", "from_wide"]


@dataclass(frozen=True)
class ScaleStructure:
    """Scales -> their items, and reverse-keyed items -> (min, max) of their response scale."""

    scales: Mapping[str, tuple[str, ...]]
    reverse: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def from_instrument(cls, instrument: Instrument, form: str = "original") -> ScaleStructure:
        """The scored items of ``form`` grouped by scale, with each item's response range."""
        items = [it for it in instrument.forms[form] if it.scored]
        scales: dict[str, list[str]] = {}
        reverse: dict[str, tuple[float, float]] = {}
        for it in items:
            for s in it.scales:
                scales.setdefault(s, []).append(it.id)
            if it.reverse:
                rs = instrument.response_scales[it.response_scale]
                reverse[it.id] = (float(rs.min), float(rs.max))
        return cls({s: tuple(v) for s, v in scales.items()}, reverse)

    def items(self) -> list[str]:
        """Every item of every scale, once, in scale order."""
        return list(dict.fromkeys(i for its in self.scales.values() for i in its))

    def keyed(self, values: pd.DataFrame) -> pd.DataFrame:
        """``values`` with the reverse-keyed items reversed (min + max - x)."""
        out = values.copy()
        for item, (lo, hi) in self.reverse.items():
            if item in out.columns:
                out[item] = lo + hi - out[item]
        return out

    def check(self, values: pd.DataFrame) -> None:
        """Every item of the structure must be a column of the data."""
        missing = [i for i in self.items() if i not in values.columns]
        if missing:
            shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
            raise PsymError(f"scale structure: items not in the data: {shown}")


@dataclass(frozen=True)
class Responses:
    """Numeric answers (respondents x items, NaN = no answer), with optional labels per row.

    ``cluster``: the persona each respondent is a prompt variant of (for cluster bootstraps);
    ``group``: the grouping for invariance (model, condition, LLM vs human ...).
    """

    values: pd.DataFrame
    cluster: pd.Series | None = None
    group: pd.Series | None = None

    def subset(self, items: Sequence[str]) -> pd.DataFrame:
        return self.values.loc[:, list(items)]


def _show(v: object) -> str:
    """repr of a label, numpy scalars as plain Python values (0, not np.int64(0))."""
    item = getattr(v, "item", None)
    return repr(item() if callable(item) else v)


def _need(df: pd.DataFrame, cols: Sequence[str | None], what: str) -> None:
    missing = [c for c in cols if c is not None and c not in df.columns]
    if missing:
        have = ", ".join(map(str, df.columns[:12]))
        raise PsymError(f"{what}: no column {', '.join(map(str, missing))} (columns: {have})")


def _numeric(values: pd.DataFrame, what: str) -> pd.DataFrame:
    out = values.apply(pd.to_numeric, errors="coerce")
    bad = values.notna() & out.isna()
    if bad.to_numpy().any():
        r, c = np.argwhere(bad.to_numpy())[0]
        raise PsymError(
            f"{what}: value {_show(values.iat[r, c])} of respondent {_show(values.index[r])}, "
            f"item {_show(values.columns[c])} is not a number"
        )
    return out.astype(float)


def _per_respondent(df: pd.DataFrame, key: str, col: str | None, what: str) -> pd.Series | None:
    if col is None:
        return None
    per = df.groupby(key, sort=False)[col].nunique(dropna=False)
    if (per > 1).any():
        who = per[per > 1].index[0]
        raise PsymError(f"{what}: respondent {_show(who)} has more than one {col!r} value")
    return df.drop_duplicates(key).set_index(key)[col]


def from_long(
    df: pd.DataFrame,
    respondent: str = "respondent",
    item: str = "item",
    value: str = "value",
    group: str | None = None,
    cluster: str | None = None,
) -> Responses:
    """A tidy table (one row per respondent and item) as :class:`Responses`."""
    what = "population data (long)"
    _need(df, [respondent, item, value, group, cluster], what)
    dup = df.duplicated([respondent, item], keep=False)
    if dup.any():
        row = df[dup].iloc[0]
        raise PsymError(
            f"{what}: respondent {_show(row[respondent])} answers item {_show(row[item])} "
            f"more than once ({int(dup.sum())} duplicated rows)"
        )
    wide = df.pivot(index=respondent, columns=item, values=value)
    wide.columns = [str(c) for c in wide.columns]
    values = _numeric(wide, what)
    lab_g = _per_respondent(df, respondent, group, what)
    lab_c = _per_respondent(df, respondent, cluster, what)
    return Responses(
        values,
        None if lab_c is None else lab_c.reindex(values.index),
        None if lab_g is None else lab_g.reindex(values.index),
    )


def from_wide(
    df: pd.DataFrame,
    items: Sequence[str] | None = None,
    group: str | None = None,
    cluster: str | None = None,
) -> Responses:
    """A respondent x item matrix (``items``: its item columns; default all but the labels)."""
    what = "population data (wide)"
    _need(df, [group, cluster, *(items or [])], what)
    cols = (
        list(items) if items is not None else [c for c in df.columns if c not in (group, cluster)]
    )
    values = _numeric(df.loc[:, cols], what)
    values.columns = [str(c) for c in values.columns]
    return Responses(
        values,
        None if cluster is None else df[cluster],
        None if group is None else df[group],
    )
