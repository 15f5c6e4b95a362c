"""The report's "How human-like are the answers?" section (``psym report RUN... --human FILE``).

Per run: the overall fidelity figures with their bootstrap intervals beside the human ceiling
(the same figures between two random halves of the human sample), a figure of each item's
fidelity (1 - W1, OpinionQA: Santurkar et al., 2023) with its interval and the ceiling as a band,
model-vs-human stacked bars of the items that diverge most, the per-item table and the subgroup
table (with steerability where personas carry a human group's label).

The figures come from the fidelity library, ``psymetrics_core.analysis.fidelity`` (``psym
fidelity``), through :func:`fidelity_library` (a test hands its own); this module reads its typed
records (``FidelityResult`` and the rest) and formats every figure with the library's own ``fmt``,
so a number reads the same in the report as on the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psymetrics_core.analysis.fidelity import FidelityOptions, fidelity
from psymetrics_core.analysis.fidelity.output import SOURCES, fmt
from psymetrics_core.analysis.fidelity.records import (
    Ceiling,
    FidelityResult,
    GroupFidelity,
    ItemFidelity,
)
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.read import RunData
from psymetrics_core.report.fidelity_figures import divergent_bars, fidelity_of_item, item_figure

__all__ = [
    "FidelityLibrary",
    "fidelity_library",
    "fidelity_context",
    "fidelity_of_item",
    "N_DIVERGENT",
]

N_DIVERGENT = 6  # items shown as model-vs-human stacked bars (the largest W1)
METHODS = {
    "sampled": "the shares of its parsed answers (across repeats, respondents and conditions)",
    "logprob": "its probabilities over the option tokens, renormalised over the options",
    "verbalized": "the shares it stated when asked what percentage of people choose each option "
    "(Meister et al., 2024)",
}


@dataclass(frozen=True)
class FidelityLibrary:
    """What this section needs of the fidelity library: ``compare(run_dir, human_file,
    session, group_columns)``, its ``fmt(estimate, metric)`` and its formulas' ``sources``."""

    compare: Callable[[Path, Path, Session, Sequence[str]], FidelityResult]
    fmt: Callable[[Any, str], str]
    sources: Mapping[str, str]


def fidelity_library() -> FidelityLibrary:
    """The fidelity library (``psym fidelity``'s) as this section reads it."""

    def compare(run: Path, human: Path, session: Session, groups: Sequence[str]) -> FidelityResult:
        result: FidelityResult = fidelity(
            run, human, session, FidelityOptions(groups=tuple(groups))
        )
        return result

    return FidelityLibrary(compare, fmt, SOURCES)


def fidelity_context(
    runs: Sequence[RunData],
    human: Path | None,
    groups: Sequence[str],
    session: Session,
    library: FidelityLibrary | None = None,
) -> dict[str, Any] | None:
    """The section's context for the template (None without ``--human``)."""
    if human is None:
        return None
    lib = library or fidelity_library()
    blocks = [_run_block(r.label, lib.compare(r.path, human, session, groups), lib) for r in runs]
    names = ("representativeness", "w1", "tv", "simbench", "jsd", "ks")
    return {
        "human": str(human),
        "runs": blocks,
        "sources": [(n, lib.sources[n]) for n in names if n in lib.sources],
    }


def _run_block(label: str, res: FidelityResult, lib: FidelityLibrary) -> dict[str, Any]:
    """One run's part of the section."""
    fmt = lib.fmt
    ceiling, same_n = res.ceiling, res.same_n
    summary = []
    for name, metric in (
        ("representativeness", "representativeness"),
        ("SimBench score", "simbench"),
        ("total variation", "tv"),
        ("Jensen-Shannon", "jsd"),
        ("KS", "ks"),
    ):
        model = fmt(getattr(res.overall, metric), metric)
        human = fmt(getattr(ceiling, metric), metric) if ceiling is not None else "—"
        small = fmt(getattr(same_n, metric), metric) if same_n is not None else "—"
        summary.append({"name": name, "model": model, "ceiling": human, "same_n": small})
    band = ceiling.representativeness if ceiling is not None else None
    title = f"{label}: per-item fidelity (1 - W1) against {Path(res.human.path).name}"
    return {
        "label": label,
        "method": res.model.method,
        "method_text": METHODS.get(res.model.method, res.model.method),
        "outside_mass": _outside(res.model.outside_mass),
        "sides": _sides(res),
        "summary": summary,
        "ceiling_text": _ceiling_text(ceiling),
        "same_n_text": _same_n_text(same_n),
        "figure": item_figure(res.items, band, res.overall.representativeness, title),
        "bars": divergent_bars(res.items, N_DIVERGENT, label),
        "item_rows": [_item_row(it, fmt) for it in res.items],
        "groups": [_group_row(g, fmt) for g in res.groups],
        "not_compared": sorted(res.not_compared.items()),
        "norm_items": len(res.norm_items),
        "notes": list(res.notes),
        "n_boot": res.n_boot,
    }


def _outside(mass: float | None) -> str | None:
    if mass is None:
        return None
    return f"on average {mass:.3f} of the model's probability fell outside the options"


def _sides(res: FidelityResult) -> str:
    m, h = res.model, res.human
    return (
        f"model: {m.units} administrations in {m.clusters} resampling clusters ({m.rows} records); "
        f"human: {h.units} respondents ({h.rows} rows)"
    )


def _ceiling_text(c: Ceiling | None) -> str:
    if c is None:
        return "no human ceiling (see the notes)"
    return f"human ceiling: {c.splits} random splits into {c.n_sample} and {c.n_rest} respondents"


def _same_n_text(c: Ceiling | None) -> str:
    if c is None:
        return "—: no human sample of the model's size (see the notes)"
    return f"{c.n_sample} random respondents against the other {c.n_rest} ({c.splits} splits)"


def _item_row(it: ItemFidelity, fmt: Callable[[Any, str], str]) -> dict[str, Any]:
    value, low, high = fidelity_of_item(it)
    text = "n/a" if value is None else f"{value:.3f}"
    if value is not None and low is not None and high is not None:
        text += f" [{low:.3f}, {high:.3f}]"
    return {
        "item": it.item,
        "scales": ", ".join(it.scales),
        "n": f"{it.n_model} / {it.n_human}",
        "fidelity": text,
        "w1": fmt(it.w1, "w1"),
        "tv": fmt(it.tv, "tv"),
        "simbench": fmt(it.simbench, "simbench"),
        "jsd": fmt(it.jsd, "jsd"),
        "ks": fmt(it.ks, "ks"),
    }


def _group_row(g: GroupFidelity, fmt: Callable[[Any, str], str]) -> dict[str, Any]:
    rep = "representativeness"
    return {
        "column": g.column,
        "value": g.value,
        "n": f"{g.n_model} / {g.n_human}",
        "model_all": fmt(g.model_all, rep),
        "model_steered": fmt(g.model_steered, rep) if g.n_model else "— (no persona carries it)",
        "steer_gain": fmt(g.steer_gain, rep) if g.n_model else "—",
        "human_others": fmt(g.human_others, rep),
        "simbench_all": fmt(g.simbench_all, "simbench"),
        "simbench_steered": fmt(g.simbench_steered, "simbench") if g.n_model else "—",
    }
