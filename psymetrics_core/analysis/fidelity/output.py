"""``psym fidelity``'s result as JSON, as tidy tables (one row per figure: items, distributions,
scales, overall with the human ceiling, subgroups) and as the plain text of the
``psym analyze RUN --human FILE`` section. Every screen formats a figure with ``fmt``, so the same
number reads the same everywhere."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from psymetrics_core.analysis.fidelity.records import (
    NONSUB,
    Estimate,
    FidelityResult,
    ScaleFidelity,
)
from psymetrics_core.base.jsonable import json_ready
from psymetrics_core.base.writing import csv_cell, output_dir, write_output

__all__ = [
    "SOURCES",
    "METRICS",
    "fmt",
    "fidelity_json",
    "tidy_tables",
    "write_fidelity",
    "fidelity_text",
    "headline",
]

# the figures, their formulas and sources, as every screen names them
SOURCES = {
    "representativeness": "1 - mean W1 (Santurkar et al., 2023, OpinionQA)",
    "w1": "W1 over the ordinal positions / (max - min position), refusals removed and both "
    "sides renormalised (Santurkar et al., 2023)",
    "tv": "0.5 * sum |p - q| over the options, both renormalised (Hu et al., 2025)",
    "simbench": "100 * (1 - TV / norm), norm = mean TV(human, uniform over the listed options) "
    "over the compared items (Hu et al., 2025, SimBench)",
    "jsd": "Jensen-Shannon divergence in bits (Lin, 1991)",
    "ks": "max |CDF_model - CDF_human| over the ordinal positions (Kolmogorov-Smirnov)",
}
METRICS = ("w1", "tv", "simbench", "jsd", "ks")
_DIGITS = {"simbench": 1, "representativeness": 3, "w1": 3, "tv": 3, "jsd": 4, "ks": 3}


def fmt(e: Estimate, metric: str) -> str:
    """``value [low, high]`` with the metric's digits; ``n/a (reason)`` when undefined."""
    if e.value is None:
        return f"n/a ({e.reason})" if e.reason else "n/a"
    d = _DIGITS.get(metric, 3)
    if e.low is None or e.high is None:
        return f"{e.value:.{d}f}"
    return f"{e.value:.{d}f} [{e.low:.{d}f}, {e.high:.{d}f}]"


def fidelity_json(r: FidelityResult) -> dict[str, Any]:
    """The whole result as JSON-ready data, with the formulas' sources."""
    data = dataclasses.asdict(r)
    data["sources"] = dict(SOURCES)
    if r.khat is not None:
        data["sources"]["khat"] = "Huang, Wu & Wang (2025)"
    return json_ready(data)  # type: ignore[no-any-return]


def _row(e: Estimate) -> dict[str, Any]:
    return {"value": e.value, "low": e.low, "high": e.high, "reason": e.reason}


def _scale_rows(s: ScaleFidelity, scope: str) -> list[dict[str, Any]]:
    names = ("representativeness", *METRICS)
    return [
        {"scope": scope, "scale": s.scale, "items": s.items, "metric": m, **_row(getattr(s, m))}
        for m in names
    ]


def _item_rows(r: FidelityResult) -> list[dict[str, Any]]:
    return [
        {
            "item": it.item,
            "scales": ";".join(it.scales),
            "n_model": it.n_model,
            "n_human": it.n_human,
            "metric": m,
            **_row(getattr(it, m)),
        }
        for it in r.items
        for m in METRICS
    ]


def _dist_rows(r: FidelityResult) -> list[dict[str, Any]]:
    out = []
    for it in r.items:
        for side, d in (("model", it.model), ("human", it.human)):
            for v, pos, share in zip(d.options.values, d.options.positions, d.shares, strict=True):
                out.append(
                    {
                        "item": it.item,
                        "side": side,
                        "option": v,
                        "position": pos,
                        "share": share,
                        "of": "substantive answers",
                    }
                )
            for word, share in zip(NONSUB, d.nonsub, strict=True):
                out.append(
                    {
                        "item": it.item,
                        "side": side,
                        "option": word,
                        "position": None,
                        "share": share,
                        "of": "all answers",
                    }
                )
    return out


def _overall_rows(r: FidelityResult) -> list[dict[str, Any]]:
    out = _scale_rows(r.overall, "model vs human")
    for c, scope in (
        (r.ceiling, "human ceiling (two halves)"),
        (r.same_n, "humans at the model's n vs the rest"),
    ):
        if c is None:
            continue
        out += [
            {
                "scope": scope,
                "scale": "overall",
                "items": len(r.items),
                "metric": m,
                **_row(getattr(c, m)),
            }
            for m in ("representativeness", "simbench", "tv", "jsd", "ks")
        ]
    return out


def _group_rows(r: FidelityResult) -> list[dict[str, Any]]:
    names = (
        "model_all",
        "model_steered",
        "steer_gain",
        "human_others",
        "simbench_all",
        "simbench_steered",
    )
    return [
        {
            "column": g.column,
            "group": g.value,
            "n_human": g.n_human,
            "n_model": g.n_model,
            "metric": m,
            **_row(getattr(g, m)),
        }
        for g in r.groups
        for m in names
    ]


def tidy_tables(r: FidelityResult) -> dict[str, pd.DataFrame]:
    """items, distributions, scales, overall (with the ceilings) and subgroups, one row per
    figure."""
    scales = [row for s in r.scales for row in _scale_rows(s, "model vs human")]
    return {
        "items": pd.DataFrame(_item_rows(r)),
        "distributions": pd.DataFrame(_dist_rows(r)),
        "scales": pd.DataFrame(scales),
        "overall": pd.DataFrame(_overall_rows(r)),
        "subgroups": pd.DataFrame(_group_rows(r)),
    }


def write_fidelity(r: FidelityResult, out: str | Path, inputs: Sequence[str | Path]) -> Path:
    """fidelity.json and the tidy CSVs into ``out`` (never onto one of ``inputs``)."""
    folder = output_dir(out, inputs=inputs, what="--output")
    text = json.dumps(fidelity_json(r), indent=2) + "\n"
    path = write_output(folder / "fidelity.json", text, inputs=inputs, what="--output")
    for name, frame in tidy_tables(r).items():
        if frame.empty:
            continue
        frame = frame.map(lambda v: csv_cell(v) if isinstance(v, str) else v)
        write_output(
            folder / f"fidelity_{name}.csv",
            frame.to_csv(index=False),
            inputs=inputs,
            what="--output",
        )
    return path


def headline(r: FidelityResult) -> list[str]:
    """The lines both screens start with: what was compared, the overall figures and the
    ceiling, each with its rows and source."""
    m, h = r.model, r.human
    out = [
        f"model: {m.path} ({m.kind}, distribution: {m.method}; {m.units} units in {m.clusters} "
        f"clusters, {m.rows} rows)",
        f"human: {h.path} ({h.kind}; {h.units} respondents, {h.rows} rows)",
        f"items compared: {len(r.items)}; bootstrap: {r.n_boot} replicates (seed {r.seed}), "
        "clusters resampled on both sides, 95% percentile intervals",
    ]
    if m.outside_mass is not None:
        out.append(
            f"model probability outside the options (mean 1 - option_mass): {m.outside_mass:.3f}"
        )
    o = r.overall
    out.append(
        f"representativeness {fmt(o.representativeness, 'representativeness')} over "
        f"{o.items} items — {SOURCES['representativeness']}"
    )
    out.append(
        f"SimBench score {fmt(o.simbench, 'simbench')} — {SOURCES['simbench']}; norm "
        f"{fmt(r.norm, 'tv')} over {len(r.norm_items)} items: "
        f"{', '.join(r.norm_items)}"
    )
    out.append(f"mean TV {fmt(o.tv, 'tv')}, JSD {fmt(o.jsd, 'jsd')}, KS {fmt(o.ks, 'ks')}")
    if r.ceiling is not None:
        c = r.ceiling
        out.append(
            f"human ceiling (two random halves, {c.n_sample} vs {c.n_rest} respondents, "
            f"{c.splits} splits): representativeness "
            f"{fmt(c.representativeness, 'representativeness')}, SimBench "
            f"{fmt(c.simbench, 'simbench')}"
        )
    if r.same_n is not None:
        c = r.same_n
        out.append(
            f"humans at the model's n ({c.n_sample} random respondents vs the other {c.n_rest}, "
            f"{c.splits} draws): representativeness "
            f"{fmt(c.representativeness, 'representativeness')}, SimBench "
            f"{fmt(c.simbench, 'simbench')}"
        )
    if r.khat is not None:
        out.append(khat_line(r))
    return out + list(r.notes)


def khat_line(r: FidelityResult) -> str:
    """k̂ with its parameters (and the k_min floor)."""
    k = r.khat
    assert k is not None
    par = f"k_min {k.k_min}, alpha {k.alpha:g}, gamma {k.gamma:g}, C {k.c:g}"
    if k.value is None:
        return f"effective human sample size k̂: n/a ({k.reason}); {par}"
    floor = (
        (
            f"; k̂ <= k_min is the floor: with k_min = {k.k_min} it is {k.k_min} even for a "
            "model that samples the human distribution exactly"
        )
        if k.value <= k.k_min
        else ""
    )
    return (
        f"effective human sample size k̂ = {k.value} (Huang, Wu & Wang, 2025; {par}; "
        f"{k.items} items, k up to {k.k_max}){floor}"
    )


def fidelity_text(r: FidelityResult, top: int = 10) -> str:
    """The plain-text section of ``psym analyze RUN --human FILE``."""
    lines = headline(r)
    lines.append("per scale (representativeness; SimBench):")
    for s in r.scales:
        lines.append(
            f"  {s.scale} ({s.items} items): "
            f"{fmt(s.representativeness, 'representativeness')}; "
            f"{fmt(s.simbench, 'simbench')}"
        )
    worst = sorted(r.items, key=lambda it: -(it.w1.value if it.w1.value is not None else -1))
    lines.append(f"items that diverge most (W1; of {len(r.items)}):")
    for it in worst[:top]:
        lines.append(
            f"  {it.item}: W1 {fmt(it.w1, 'w1')}, TV {fmt(it.tv, 'tv')} "
            f"(n model {it.n_model}, human {it.n_human})"
        )
    for g in r.groups:
        lines.append(
            f"group {g.column} = {g.value} (humans {g.n_human}, personas {g.n_model}): model "
            f"{fmt(g.model_all, 'representativeness')}, steered "
            f"{fmt(g.model_steered, 'representativeness')}, other humans "
            f"{fmt(g.human_others, 'representativeness')}"
        )
    return "\n".join(lines)
