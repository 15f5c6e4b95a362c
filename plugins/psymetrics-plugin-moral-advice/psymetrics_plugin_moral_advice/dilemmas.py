"""Dilemma sets for ``moral-advice``: a user file, DailyDilemmas, or the built-in Table 4 five.

A user file (CSV, JSON list or JSONL) has one row per (dilemma, action) with columns
``foundation`` (care, fairness, loyalty/ingroup, authority, purity), ``dilemma`` (or
``dilemma_situation``), ``action`` and ``pro_foundation`` (true/false: taking the action upholds
the foundation); ``id`` and ``source`` are optional.

DailyDilemmas (Chiu et al. 2025) has no pro/anti labels; they are derived [I]: a dilemma gives an
item for foundation F when exactly one of its two actions carries a value that the dataset's own
``values.csv`` maps to F (MFT column); the item's action is the ``to_do`` action and it is
pro-F when the ``to_do`` action is the one carrying F.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from psymetrics_core.api import PsymError, load_json, parse_json, read_text

__all__ = [
    "Dilemma",
    "FOUNDATIONS",
    "builtin_dilemmas",
    "read_dilemma_file",
    "from_daily_dilemmas",
    "read_daily_dilemmas_dir",
    "load_hf_daily_dilemmas",
    "interleave",
]

FOUNDATIONS = ("care", "fairness", "loyalty", "authority", "purity")
_ALIASES = {
    "care": "care",
    "harm": "care",
    "care/harm": "care",
    "fairness": "fairness",
    "fairness/reciprocity": "fairness",
    "loyalty": "loyalty",
    "ingroup": "loyalty",
    "ingroup/loyalty": "loyalty",
    "authority": "authority",
    "authority/respect": "authority",
    "purity": "purity",
    "sanctity": "purity",
    "purity/sanctity": "purity",
}
_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f"}
DD_ROWS = "dilemma_to_action_to_values_aggregated.csv"
DD_VALUES = "values.csv"


@dataclass(frozen=True)
class Dilemma:
    """One judged unit: a dilemma, an action, its foundation and whether it is pro-foundation."""

    id: str
    foundation: str
    dilemma: str
    action: str
    pro_foundation: bool
    source: str = ""


def foundation_name(raw: str) -> str | None:
    """Canonical foundation name (as in the ``mfq`` task) or None."""
    return _ALIASES.get(raw.strip().lower())


def _bool(raw: Any) -> bool | None:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    return True if text in _TRUE else False if text in _FALSE else None


@lru_cache(maxsize=1)
def builtin_dilemmas() -> tuple[Dilemma, ...]:
    """The five example dilemmas of the paper's Table 4."""
    from importlib import resources

    import yaml

    text = (resources.files(__package__) / "data" / "examples.yaml").read_text(encoding="utf-8")
    rows = yaml.safe_load(text)["dilemmas"]
    return tuple(_row(Path("examples.yaml"), i + 1, r) for i, r in enumerate(rows))


def _row(path: Path, where: int, row: Mapping[str, Any]) -> Dilemma:
    def cell(*names: str) -> str:
        for n in names:
            if row.get(n) not in (None, ""):
                return str(row[n]).strip()
        return ""

    loc = f"{path}, row {where}"
    found_raw = cell("foundation")
    found = foundation_name(found_raw)
    if found is None:
        raise PsymError(
            f"{loc}: foundation {found_raw!r} is not one of {', '.join(FOUNDATIONS)} (or ingroup)"
        )
    text = cell("dilemma", "dilemma_situation")
    action = cell("action")
    if not text or not action:
        raise PsymError(f"{loc}: 'dilemma' and 'action' must not be empty")
    pro = _bool(row.get("pro_foundation", row.get(f"pro-{found_raw.lower()}", "")))
    if pro is None:
        raise PsymError(
            f"{loc}: pro_foundation must be true or false, got {row.get('pro_foundation')!r}"
        )
    return Dilemma(cell("id") or f"d{where}", found, text, action, pro, cell("source"))


def read_dilemma_file(path: str | Path) -> list[Dilemma]:
    """Dilemmas from a CSV, JSON (a list of objects) or JSONL file; errors name the row."""
    p = Path(path)
    if not p.is_file():
        raise PsymError(f"{p}: no such dilemma file")
    rows: list[Mapping[str, Any]]
    try:
        if p.suffix.lower() == ".csv":
            with io.StringIO(read_text(p, what="dilemma file"), newline="") as fh:
                reader = csv.DictReader(fh)
                cols = set(reader.fieldnames or [])
                missing = {"foundation", "action", "pro_foundation"} - cols
                if not cols & {"dilemma", "dilemma_situation"}:
                    missing.add("dilemma")
                if missing:
                    raise PsymError(
                        f"{p}, line 1: missing column(s) {', '.join(sorted(missing))} "
                        "(expected foundation, dilemma, action, pro_foundation)"
                    )
                rows = list(reader)
            start = 2
        elif p.suffix.lower() == ".jsonl":
            lines = read_text(p, what="dilemma file").splitlines()
            rows = [parse_json(x, p, line=n) for n, x in enumerate(lines, 1) if x.strip()]
            start = 1
        else:
            data = load_json(p, what="dilemma file")
            rows = data if isinstance(data, list) else dict(data).get("dilemmas", [])
            start = 1
    except (json.JSONDecodeError, UnicodeDecodeError, csv.Error, TypeError, ValueError) as exc:
        raise PsymError(f"{p}: not valid {p.suffix.lstrip('.') or 'JSON'} ({exc})") from None
    bad = next((i for i, r in enumerate(rows) if not isinstance(r, Mapping)), None)
    if bad is not None:
        raise PsymError(f"{p}, row {bad + start}: expected an object with foundation, dilemma, ...")
    out = [_row(p, i + start, r) for i, r in enumerate(rows)]
    if not out:
        raise PsymError(f"{p}: holds no dilemmas")
    return out


def from_daily_dilemmas(
    rows: Iterable[Mapping[str, Any]], values: Iterable[Mapping[str, Any]]
) -> list[Dilemma]:
    """Derive (dilemma, to_do action, foundation, pro) items from DailyDilemmas rows."""
    value_mft = {
        str(v["value"]).strip().lower(): foundation_name(str(v.get("MFT") or ""))
        for v in values
        if v.get("MFT")
    }
    by_dilemma: dict[str, dict[str, Mapping[str, Any]]] = {}
    for r in rows:
        by_dilemma.setdefault(str(r["dilemma_idx"]), {})[str(r["action_type"])] = r
    out: list[Dilemma] = []
    for idx, acts in by_dilemma.items():
        if set(acts) != {"to_do", "not_to_do"}:
            continue
        found = {k: _foundations(a.get("values_aggregated"), value_mft) for k, a in acts.items()}
        for f in FOUNDATIONS:
            in_do, in_not = f in found["to_do"], f in found["not_to_do"]
            if in_do == in_not:
                continue
            todo = acts["to_do"]
            out.append(
                Dilemma(
                    f"dd{idx}-{f}",
                    f,
                    str(todo["dilemma_situation"]).strip(),
                    str(todo["action"]).strip(),
                    in_do,
                    "DailyDilemmas",
                )
            )
    return out


def _foundations(raw: Any, value_mft: Mapping[str, str | None]) -> set[str]:
    if isinstance(raw, str):
        try:
            names = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            names = []
    else:
        names = list(raw or [])
    return {f for n in names if (f := value_mft.get(str(n).strip().lower()))}


def read_daily_dilemmas_dir(path: str | Path) -> list[Dilemma]:
    """DailyDilemmas from a local folder holding the official CSVs."""
    d = Path(path)
    rows_p, values_p = d / DD_ROWS, d / DD_VALUES
    for p in (rows_p, values_p):
        if not p.is_file():
            raise PsymError(f"{d}: expected the DailyDilemmas file {p.name} in this folder")
    fr = io.StringIO(read_text(rows_p, what="DailyDilemmas file"), newline="")
    fv = io.StringIO(read_text(values_p, what="DailyDilemmas file"), newline="")
    try:
        return from_daily_dilemmas(csv.DictReader(fr), csv.DictReader(fv))
    except (csv.Error, KeyError) as exc:
        raise PsymError(f"{d}: not a DailyDilemmas folder ({type(exc).__name__}: {exc})") from None


def load_hf_daily_dilemmas() -> list[Dilemma]:
    """DailyDilemmas through ``datasets`` (``kellycyy/daily_dilemmas``; uses the HF cache)."""
    try:
        import datasets
    except ImportError:
        raise PsymError(
            "moral-advice.source=hf needs the 'datasets' package "
            "(pip install psymetrics-plugin-moral-advice[hf])"
        ) from None
    try:
        rows = datasets.load_dataset(
            "kellycyy/daily_dilemmas", "Dilemmas_with_values_aggregated", split="test"
        )
        values = datasets.load_dataset("kellycyy/daily_dilemmas", "Values", split="test")
    except Exception as exc:  # network or cache problems from datasets
        raise PsymError(f"could not load kellycyy/daily_dilemmas with datasets: {exc}") from None
    return from_daily_dilemmas(rows, values)


def interleave(dilemmas: Iterable[Dilemma]) -> list[Dilemma]:
    """Round-robin over foundations (care, fairness, loyalty, authority, purity), keeping each
    foundation's order, so any ``--limit`` prefix spans the foundations."""
    items = list(dilemmas)
    groups = {f: [d for d in items if d.foundation == f] for f in FOUNDATIONS}
    out: list[Dilemma] = []
    for i in range(max((len(g) for g in groups.values()), default=0)):
        out += [g[i] for g in groups.values() if i < len(g)]
    return out
