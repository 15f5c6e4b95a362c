"""Tidy tables of run directories with polars: scale scores, population entries, samples and
judge calls.

``psym export scores|population|samples|judge RUN_DIR... --format csv|parquet --output FILE``
writes one of these tables. Columns (also in docs/guides/report.md):

scores (one row per run, model label, task, condition, repeat, seed and scale):
    run, label, model, mode, task, condition, respondent, repeat, seed, scale, score,
    range_low, range_high, n_items, n_answered, complete, method, z, norm_group, reason
    (``respondent``: the respondent's id in a population run, empty otherwise; ``range_*``: the
    scale's score range from its scoring rule, empty where it has none)
population (population runs: one row per run, task, other-condition group and scale or
validity indicator, as results.json's ``tasks.<task>.population`` records it):
    run, label, model, task, group, kind, name, n_respondents, n_cells, n_degenerate, n, mean,
    sd, min, max, n_fired, range_low, range_high, reason
samples (one row per administered prompt):
    run, label, model, mode, task, form, condition, repeat, seed, item, scales, reverse,
    prompt, completion, answer, parse_status, option_probs (JSON)
judge (one row per judge-model call):
    run, label, task, item, judge_model, stage, prompt, completion, verdict, status
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from psymetrics_core.administer.ranges import scale_ranges
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.writing import FORMULA_START, NUMBER_PATTERN, check_target, write_output
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.inputs import run_inputs
from psymetrics_core.records.population_summary import (
    IndicatorSpread,
    ScaleSpread,
    TaskSpread,
    is_population_run,
    population_summary,
)
from psymetrics_core.records.read import load_run_data

__all__ = [
    "TABLES",
    "FORMATS",
    "scores_table",
    "population_table",
    "samples_table",
    "judge_table",
    "export_table",
]

FORMATS = ("csv", "parquet")

SCORE_SCHEMA: dict[str, str] = {
    "run": "str",
    "label": "str",
    "model": "str",
    "mode": "str",
    "task": "str",
    "condition": "str",
    "respondent": "str",
    "repeat": "int",
    "seed": "int",
    "scale": "str",
    "score": "float",
    "range_low": "float",
    "range_high": "float",
    "n_items": "int",
    "n_answered": "int",
    "complete": "bool",
    "method": "str",
    "z": "float",
    "norm_group": "str",
    "reason": "str",
}
_POPULATION_INTS = {"n_respondents", "n_cells", "n_degenerate", "n", "n_fired"}
_POPULATION_FLOATS = {"mean", "sd", "min", "max", "range_low", "range_high"}
POPULATION_SCHEMA: dict[str, str] = {
    c: "int" if c in _POPULATION_INTS else "float" if c in _POPULATION_FLOATS else "str"
    for c in (
        "run label model task group kind name n_respondents n_cells n_degenerate n mean sd min "
        "max n_fired range_low range_high reason"
    ).split()
}
SAMPLE_SCHEMA: dict[str, str] = {
    "run": "str",
    "label": "str",
    "model": "str",
    "mode": "str",
    "task": "str",
    "form": "str",
    "condition": "str",
    "repeat": "int",
    "seed": "int",
    "item": "str",
    "scales": "str",
    "reverse": "bool",
    "prompt": "str",
    "completion": "str",
    "answer": "float",
    "parse_status": "str",
    "option_probs": "str",
}
JUDGE_SCHEMA: dict[str, str] = {
    "run": "str",
    "label": "str",
    "task": "str",
    "item": "str",
    "judge_model": "str",
    "stage": "str",
    "prompt": "str",
    "completion": "str",
    "verdict": "str",
    "status": "str",
}


def _polars() -> Any:
    """polars, imported on first use (the [analysis] extra; `psym export` alone needs it)."""
    import polars  # on demand: the [analysis] extra

    return polars


def _polars_schema(schema: dict[str, str]) -> dict[str, Any]:
    pl = _polars()

    types = {"str": pl.Utf8, "int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean}
    return {k: types[v] for k, v in schema.items()}


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return float(x)


def _int(x: Any) -> int | None:
    return int(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def _runs(paths: Sequence[str | Path]) -> list[Any]:

    if not paths:
        raise PsymError("give at least one run directory")
    return [load_run_data(p) for p in paths]


def _label(run: Any) -> str:
    return str(run.results.get("label") or run.results.get("model") or run.path.name)


def _ranges(results: dict[str, Any], session: Session | None) -> dict[tuple[str, str], Any]:
    return {} if session is None else scale_ranges(results, session)


def scores_table(paths: Sequence[str | Path], session: Session | None = None) -> Any:
    """Scale scores of every (condition, repeat) administration of every task (a population
    run's rows name their respondent; ``session``: the instruments, for the score ranges)."""
    pl = _polars()

    rows = []
    for r in _runs(paths):
        res = r.results
        ranges = _ranges(res, session)
        for task, entry in r.tasks.items():
            first_scales = entry.get("scales") or {}
            for adm in entry.get("runs") or [entry]:
                for scale, s in (adm.get("scales") or {}).items():
                    full = first_scales.get(scale) or {}
                    n_i, n_a = _int(s.get("n_items")), _int(s.get("n_answered"))
                    z = s.get("z", full.get("z") if adm is entry else None)
                    who = (adm.get("facets") or {}).get("respondent")
                    span = ranges.get((task, scale)) or (None, None)
                    rows.append(
                        {
                            "run": r.path.resolve().name,
                            "label": _label(r),
                            "model": str(res.get("model")),
                            "mode": r.mode,
                            "task": task,
                            "condition": str(adm.get("condition", "original")),
                            "respondent": who.split("=", 1)[-1] if who else None,
                            "repeat": _int(adm.get("repeat", 0)),
                            "seed": _int(adm.get("seed", res.get("seed"))),
                            "scale": scale,
                            "score": _num(s.get("score")),
                            "range_low": span[0],
                            "range_high": span[1],
                            "n_items": n_i,
                            "n_answered": n_a,
                            "complete": None if n_i is None or n_a is None else n_a >= n_i,
                            "method": s.get("method"),
                            "z": _num(z),
                            "norm_group": (full.get("norm") or {}).get("group"),
                            "reason": s.get("reason"),
                        }
                    )
    return pl.DataFrame(rows, schema=_polars_schema(SCORE_SCHEMA), orient="row")


def population_table(paths: Sequence[str | Path], session: Session | None = None) -> Any:
    """The population entry of every population run among ``paths``: per task and other-
    condition group, each scale's and validity indicator's spread across respondents."""
    pl = _polars()

    rows = []
    runs = _runs(paths)
    for r in runs:
        if not is_population_run(r.results):
            continue
        ranges = _ranges(r.results, session)
        head = {"run": r.path.resolve().name, "label": _label(r), "model": str(r.results["model"])}
        for sp in population_summary(r.results):
            rows += _population_rows(head, sp, ranges)
    if not any(is_population_run(r.results) for r in runs):
        raise PsymError(
            "no population run among the run directories (population rows come from "
            "`psym eval --population`; use `psym export scores` for a single model)"
        )
    return pl.DataFrame(rows, schema=_polars_schema(POPULATION_SCHEMA), orient="row")


def _population_rows(
    head: dict[str, Any], sp: TaskSpread, ranges: dict[tuple[str, str], Any]
) -> list[dict[str, Any]]:
    """One task group's rows of the population table: its scales, then its indicators."""
    group = {
        "task": sp.task,
        "group": sp.group,
        "n_respondents": sp.n_respondents,
        "n_cells": sp.n_cells,
        "n_degenerate": sp.n_degenerate,
    }
    rows = []
    items: list[ScaleSpread | IndicatorSpread] = [*sp.scales, *sp.indicators]
    for x in items:
        is_scale = isinstance(x, ScaleSpread)
        name = x.scale if isinstance(x, ScaleSpread) else x.indicator
        span = ranges.get((sp.task, name)) if is_scale else None
        rows.append(
            {
                **head,
                **group,
                "kind": "scale" if is_scale else "indicator",
                "name": name,
                "n": x.n,
                "mean": x.mean,
                "sd": x.sd,
                "min": x.min,
                "max": x.max,
                "n_fired": None if isinstance(x, ScaleSpread) else x.n_fired,
                "range_low": span[0] if span else None,
                "range_high": span[1] if span else None,
                "reason": x.reason,
            }
        )
    return rows


def samples_table(paths: Sequence[str | Path]) -> Any:
    """One row per administered prompt (samples.jsonl, flattened)."""
    pl = _polars()

    rows = []
    for r in _runs(paths):
        for s in r.samples:
            meta = s.get("item_meta") or {}
            probs = s.get("option_probs")
            rows.append(
                {
                    "run": r.path.resolve().name,
                    "label": _label(r),
                    "model": str(r.results.get("model")),
                    "mode": r.mode,
                    "task": s.get("task"),
                    "form": s.get("form"),
                    "condition": s.get("condition", "original"),
                    "repeat": _int(s.get("repeat", 0)),
                    "seed": _int(s.get("seed", r.results.get("seed"))),
                    "item": str(s.get("item")),
                    "scales": ";".join(meta.get("scales") or []),
                    "reverse": meta.get("reverse"),
                    "prompt": s.get("rendered_prompt"),
                    "completion": s.get("completion"),
                    "answer": _num(s.get("answer")),
                    "parse_status": s.get("parse_status"),
                    "option_probs": None if probs is None else json.dumps(probs, sort_keys=True),
                }
            )
    return pl.DataFrame(rows, schema=_polars_schema(SAMPLE_SCHEMA), orient="row")


def judge_table(paths: Sequence[str | Path]) -> Any:
    """One row per judge-model call (judge.jsonl, flattened)."""
    pl = _polars()

    rows = []
    for r in _runs(paths):
        for j in r.judge:
            msgs = (j.get("prompt") or {}).get("messages") or []
            parsed = j.get("verdict")  # a VerdictRecord or None (records/samples.py)
            verdict = parsed.get("value") if isinstance(parsed, dict) else None
            status = parsed.get("status") if isinstance(parsed, dict) else None
            rows.append(
                {
                    "run": r.path.resolve().name,
                    "label": _label(r),
                    "task": j.get("task"),
                    "item": None if j.get("item") is None else str(j.get("item")),
                    "judge_model": j.get("judge_model"),
                    "stage": j.get("stage"),
                    "prompt": msgs[-1].get("content") if msgs else None,
                    "completion": j.get("completion"),
                    "verdict": None if verdict is None else str(verdict),
                    "status": status,
                }
            )
    return pl.DataFrame(rows, schema=_polars_schema(JUDGE_SCHEMA), orient="row")


TABLES: dict[str, Any] = {
    "scores": scores_table,
    "population": population_table,
    "samples": samples_table,
    "judge": judge_table,
}
WITH_SESSION = ("scores", "population")  # tables that read the instruments (score ranges)


def _formula_safe(frame: Any) -> Any:
    """``frame`` with every text cell a spreadsheet would run as a formula neutralised
    (``base.writing.csv_cell``: a leading apostrophe; plain numbers such as ``-1.5`` stay)."""
    pl = _polars()

    risky = "^[" + re.escape("".join(FORMULA_START)) + "]"
    number = f"^(?:{NUMBER_PATTERN})$"
    return frame.with_columns(
        pl.when(pl.col(c).str.contains(risky) & ~pl.col(c).str.contains(number))
        .then(pl.lit("'") + pl.col(c))
        .otherwise(pl.col(c))
        .alias(c)
        for c, dtype in frame.schema.items()
        if dtype == pl.Utf8
    )


def export_table(
    table: str,
    paths: Sequence[str | Path],
    fmt: str,
    output: str | Path,
    session: Session | None = None,
) -> tuple[Path, int]:
    """Write ``table`` of ``paths`` as CSV or parquet; returns the path and the row count.

    The output is written by ``base.writing.write_output`` (never onto the runs' own record
    files); in CSV a text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
    return gets a leading apostrophe (unless it is a number), so a spreadsheet shows it as text.
    """
    if table not in TABLES:
        raise PsymError(f"unknown table {table!r} (one of {', '.join(TABLES)})")
    if fmt not in FORMATS:
        raise PsymError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    inputs = run_inputs(paths)
    check_target(output, inputs=inputs, what="--output", make_parents=True)  # before the work
    frame = TABLES[table](paths, session) if table in WITH_SESSION else TABLES[table](paths)
    if fmt == "csv":
        safe = _formula_safe(frame)
        out = write_output(
            output, safe.write_csv, inputs=inputs, what="--output", make_parents=True
        )
    else:
        out = write_output(
            output, frame.write_parquet, inputs=inputs, what="--output", make_parents=True
        )
    return out, frame.height
