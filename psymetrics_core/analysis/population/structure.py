"""Structural analyses of a population task for ``psym analyze``: parallel analysis (always),
EFA with a named rotation (``--efa N|auto``, ``--rotation``), a CFA of a model in lavaan syntax
(``--cfa-model FILE``) and measurement invariance across a grouping (``--group``).

The data are the task's respondent x item answers with the reverse-keyed items reversed (the
keying of the one-factor-per-scale CFAs). The invariance model is the instrument's scale
structure, one factor per scale (``invariance.measurement_invariance``); groups are a run's
model (its label; the run directories when runs share a label), the condition cell (the
conditions crossed with the respondents), a respondent label, or the data's source (LLM vs
human with ``--responses ... --human FILE``). Tucker's congruence compares the EFA loadings with
the human loadings an instrument ships (``human_loadings:`` in its spec, raw direction as
published; reverse-keyed items are flipped to the EFA's keyed direction here): factors are
matched one to one over min(k) factors, phi is computed over the items both have, and every
shortfall (fewer factors, items not in the data) is named in its note ("congruence_note");
with fewer than 3 shared items, or no human loadings, phi is None with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psymetrics_core.analysis.population.cfa import CFAResult, cfa
from psymetrics_core.analysis.population.cfa_model import CFAModel, read_cfa_model
from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.dimensionality import (
    ParallelAnalysis,
    auto_basis,
    congruence_reading,
    efa,
    match_congruence,
    parallel_analysis,
    parallel_text,
)
from psymetrics_core.analysis.population.entry import (
    CFAModelEntry,
    Congruence,
    EFAEntry,
    InvarianceEntry,
    StructureParts,
)
from psymetrics_core.analysis.population.invariance import (
    InvarianceResult,
    InvarianceStep,
    measurement_invariance,
)
from psymetrics_core.analysis.population.population_data import PopulationData
from psymetrics_core.analysis.population.structure_options import StructureOptions
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import HumanLoadings

__all__ = [
    "CFAModel",
    "StructureOptions",
    "read_cfa_model",
    "structure_analysis",
    "invariance_entry",
    "congruence",
    "group_series",
    "check_options",
    "check_model_items",
    "structure_text",
    "invariance_text",
]

NO_HUMAN_LOADINGS = "the instrument ships no human loadings"
MIN_CONGRUENCE_ITEMS = 3  # phi over fewer shared items says nothing
READING = (
    "Lorenzo-Seva & ten Berge (2006): phi >= .95 equal, .85-.94 fair similarity, "
    "below .85 not equal"
)
RUN_GROUPS = ("model", "condition")


def group_series(pop: PopulationData, opts: StructureOptions) -> pd.Series | None:
    """The group of each respondent (None when no label of ``pop`` is ``opts.group``)."""
    g = opts.group
    cells = pop.cells
    if g in RUN_GROUPS and cells is not None:
        col = cells["run"].map(dict(opts.run_labels)) if g == "model" else cells["condition"]
        return col.reindex(pop.values.index)
    if g is not None and g in pop.labels.columns:
        return pop.labels[g].reindex(pop.values.index).astype(object)
    return None


def check_options(found: Mapping[str, PopulationData], opts: StructureOptions | None) -> None:
    """Before the analyses of population runs: ``--group`` must name model, condition or a
    label of some task, and every name of ``--cfa-model`` must be an item of some task."""
    if opts is None or not found:
        return
    if opts.group is not None and opts.group not in RUN_GROUPS:
        if not any(opts.group in p.labels.columns for p in found.values()):
            labels = sorted({str(c) for p in found.values() for c in p.labels.columns})
            raise PsymError(
                f"--group {opts.group}: not model, condition or a respondent label "
                f"(labels: {', '.join(labels) or 'none'})"
            )
    model = opts.cfa_model
    if model is None:
        return
    if model.task is not None:
        if model.task not in found:
            raise PsymError(
                f"--cfa-model {model.task}={model.path}: no population task "
                f"{model.task!r} here (tasks: {', '.join(sorted(found))})"
            )
        check_model_items(model, model.task, list(found[model.task].values.columns))
        return
    fits = sorted(t for t, p in found.items() if model.unknown(list(p.values.columns)) is None)
    for t in fits:  # a factor named like an item of the task the model fits
        check_model_items(model, t, list(found[t].values.columns))
    if not fits:
        first = min(found.values(), key=lambda p: p.task)
        check_model_items(model, first.task, list(first.values.columns))
    if len(fits) > 1:
        raise PsymError(
            f"--cfa-model {model.path}: its names are items of several tasks here "
            f"({', '.join(fits)}): write --cfa-model TASK={model.path}"
        )


def check_model_items(model: CFAModel, task: str, columns: Sequence[str]) -> None:
    """One error naming the file and line of the first name that is not a factor of the model
    or an item of ``task`` (``columns``)."""
    clash = next((s for s in model.statements if s.op == "=~" and s.lhs in set(columns)), None)
    if clash is not None:
        raise PsymError(
            f"--cfa-model {model.path}, line {clash.line}: factor {clash.lhs!r} is "
            f"named like an item of task {task}; give the factor a name of its own"
        )
    miss = model.unknown(columns)
    if miss is not None:
        cols = [str(c) for c in columns]
        shown = ", ".join(cols[:12]) + (" ..." if len(cols) > 12 else "")
        raise PsymError(
            f"--cfa-model {model.path}, line {miss[0]}: {miss[1]!r} is not a factor "
            f"of the model or an item of task {task} (items: {shown})"
        )


def structure_analysis(
    pop: PopulationData,
    structure: ScaleStructure,
    opts: StructureOptions | None,
    group: pd.Series | None = None,
    human: HumanLoadings | None = None,
    missing: str = "listwise",
) -> StructureParts:
    """The task entry's parallel analysis, EFA (with --efa; Tucker's congruence with the
    instrument's ``human`` loadings), CFA model (with --cfa-model) and invariance (with a
    grouping: ``opts.group`` or the given ``group``), each under ``missing``."""
    opts = opts or StructureOptions()
    keyed = structure.keyed(pop.values)
    items = keyed.loc[:, structure.items()]
    pa = parallel_analysis(items, kind=opts.pa, missing=missing)
    fa = None
    if opts.efa is not None:
        fa = _efa_entry(items, opts, pa, missing)
        fa.congruence = congruence(fa, human, structure)
    cm = opts.cfa_model
    model = None
    if cm is not None and (cm.task or pop.task) == pop.task:
        if cm.task is not None or cm.unknown(list(keyed.columns)) is None:
            model = _cfa_model_entry(keyed, cm, missing)
    inv = None
    if group is None and opts.group is not None:
        group = group_series(pop, opts)
        if group is None:
            why = f"the respondents have no label {opts.group!r}"
            inv = InvarianceEntry(opts.group, InvarianceResult({}, [], why))
    if group is not None:
        name = opts.group or str(group.name)
        inv = invariance_entry(name, Responses(pop.values, group=group), structure, missing)
    return StructureParts(pa, fa, model, inv)


def _efa_entry(
    items: pd.DataFrame, opts: StructureOptions, pa: ParallelAnalysis, missing: str
) -> EFAEntry:
    auto = not isinstance(opts.efa, int)
    n = pa.n_factors if auto else opts.efa
    out = EFAEntry(n if isinstance(n, int) else None, opts.rotation)
    if auto and pa.reason is None:
        out.basis = auto_basis(pa)
    if out.n_factors is None or out.n_factors < 1:
        why = pa.reason or "parallel analysis retains no factor"
        out.reason = f"--efa auto: {why}"
        out.rows = pa.rows
        return out
    n = out.n_factors
    res = efa(items, n, opts.rotation if n > 1 else None, missing=missing)
    out.rows = res.rows
    out.method = res.method
    if res.loadings is None:
        out.reason = res.reason
        return out
    # each factor reflected so that its loadings sum to a positive number (as psych's fa)
    sign = np.where(res.loadings.sum(axis=0).to_numpy() < 0, -1.0, 1.0)
    lam = res.loadings * sign
    out.factors = [str(c) for c in lam.columns]
    out.loadings = {str(i): [float(v) for v in row] for i, row in lam.iterrows()}
    out.heywood = list(res.heywood)
    if res.factor_corr is not None and n > 1:
        phi = np.asarray(res.factor_corr) * np.outer(sign, sign)
        out.factor_corr = [[float(v) for v in r] for r in phi]
    return out


def congruence(e: EFAEntry, human: HumanLoadings | None, structure: ScaleStructure) -> Congruence:
    """Tucker's congruence of the EFA ``e``: phi per human factor (None: unmatched), the
    matched EFA factor ("-F2": reflected), the reading, the source and the caveats."""
    if human is None:
        return Congruence(reason=NO_HUMAN_LOADINGS)
    if e.loadings is None or e.factors is None:
        return Congruence(reason=f"the EFA is undefined ({e.reason})", source=human.source)
    table = pd.DataFrame(
        [v for _, v in human.loadings],
        index=[i for i, _ in human.loadings],
        columns=list(human.factors),
    )
    for item in table.index.intersection(list(structure.reverse)):
        table.loc[item] = -table.loc[item]  # raw direction as published -> keyed, as the EFA
    ours = pd.DataFrame.from_dict(e.loadings, orient="index", columns=e.factors)
    shared = [i for i in table.index if i in ours.index]
    absent = [i for i in table.index if i not in ours.index]
    if len(shared) < MIN_CONGRUENCE_ITEMS:
        which = f" (not in the data: {_names(absent)})" if absent else ""
        return Congruence(
            reason=(
                f"{len(shared)} of the {len(table)} items of the human loadings are in the "
                f"EFA{which}; phi needs {MIN_CONGRUENCE_ITEMS} or more"
            ),
            source=human.source,
        )
    res = match_congruence(ours.loc[shared], table.loc[shared])
    return Congruence(
        phi=res.phi,
        source=human.source,
        match=res.match,
        items=len(shared),
        reading={k: None if v is None else congruence_reading(v) for k, v in res.phi.items()},
        note=_congruence_note(e, human, absent, [i for i in ours.index if i not in table.index]),
    )


def _names(items: Sequence[str], most: int = 8) -> str:
    return ", ".join(items[:most]) + (f" (+{len(items) - most} more)" if len(items) > most else "")


def _congruence_note(
    e: EFAEntry, human: HumanLoadings, absent: list[str], unloaded: list[str]
) -> str | None:
    """The caveats of a congruence: factor counts, items on one side only, rotations."""
    notes = []
    ka, kb = len(e.factors or []), len(human.factors)
    if ka != kb:
        notes.append(f"EFA has {ka} factor(s), the human loadings {kb}: matched over {min(ka, kb)}")
    if absent:
        notes.append(
            f"{len(absent)} item(s) of the human loadings are not in the data ({_names(absent)})"
        )
    if unloaded:
        notes.append(
            f"{len(unloaded)} item(s) have no human loading and are left out ({_names(unloaded)})"
        )
    if human.rotation and e.rotation and human.rotation.lower() != e.rotation:
        notes.append(f"human loadings {human.rotation}-rotated, this EFA {e.rotation}")
    return "; ".join(notes) or None


def _cfa_model_entry(keyed: pd.DataFrame, model: CFAModel, missing: str) -> CFAModelEntry:
    miss = model.unknown(list(keyed.columns))
    if miss is not None:
        why = f"the model names {miss[1]!r} (line {miss[0]}), not an item of this task"
        return CFAModelEntry(model.syntax, model.path, CFAResult(model.syntax, 0, reason=why))
    problem = model.identification()
    if problem is not None:
        rows = len(keyed.loc[:, [c for c in keyed.columns if c in model.observed]].dropna())
        reason = f"model not identified: {problem}"
        return CFAModelEntry(model.syntax, model.path, CFAResult(model.syntax, rows, reason=reason))
    try:
        res = cfa(keyed, model.syntax, missing)
    except PsymError as exc:
        raise PsymError(f"--cfa-model {model.path}: {exc}") from None
    return CFAModelEntry(model.syntax, model.path, res)


def invariance_entry(
    name: str, data: Responses, structure: ScaleStructure, missing: str = "listwise"
) -> InvarianceEntry:
    """The configural -> metric -> scalar ladder of ``data`` across ``data.group``, with the
    instrument's scales as factors, as the task entry's invariance part. Items are divided
    by their pooled SD first: the same affine map in every group leaves each rung's chi-square
    unchanged and keeps the optimiser well scaled (answer codes of 0-333 stop it early); when
    that ladder does not converge, the one on the raw answers is tried."""
    sd = data.values.std()
    scaled = data.values / sd.where(sd > 0, 1.0)
    res = measurement_invariance(Responses(scaled, group=data.group), structure, missing=missing)
    if res.reason is not None and "did not converge" in res.reason:
        raw = measurement_invariance(data, structure, missing=missing)
        res = raw if raw.reason is None else res
    return InvarianceEntry(name, res)


def _n(x: Any, d: int = 2, sign: bool = False) -> str:
    if x is None or x != x:
        return "—"
    return f"{x:+.{d}f}" if sign else f"{x:.{d}f}"


def structure_text(parts: StructureParts) -> list[str]:
    """Short lines of the structural parts of a task entry (those present)."""
    out: list[str] = []
    out += parallel_text(parts.parallel_analysis)
    if parts.efa is not None:
        out += _efa_text(parts.efa)
    if parts.cfa_model is not None:
        c, f = parts.cfa_model.result, parts.cfa_model.result.fit
        out.append(
            f"  CFA model {Path(parts.cfa_model.file).name}: "
            + (
                f"undefined ({c.reason})"
                if f is None
                else f"chi2 {_n(f.chisq)} df {f.df} CFI {_n(f.cfi, 3)} TLI {_n(f.tli, 3)} "
                f"RMSEA {_n(f.rmsea, 3)} SRMR {_n(f.srmr, 3)}"
            )
            + ("" if c.rows is None else f", {c.rows.text()}")
        )
        if f is not None and f.reason:
            out.append(f"    CFI, TLI undefined: {f.reason}")
        if f is not None and f.caveat:
            out.append(f"    not a verdict: {f.caveat}")
        if c.heywood:
            out.append(f"    Heywood: {'; '.join(c.heywood)}")
    if parts.invariance is not None:
        out += invariance_text(parts.invariance)
    return out


def _efa_text(x: EFAEntry) -> list[str]:
    k = "—" if x.n_factors is None else x.n_factors
    head = f"  EFA ({x.method}, {x.rotation or 'unrotated'}, {k} factor(s))"
    used = "" if x.rows is None else f"; {x.rows.text()}"
    basis = [] if x.basis is None else [f"    {x.basis}"]
    if x.loadings is None or x.factors is None:
        return [f"{head}: undefined ({x.reason}){used}", *basis]
    out = [f"{head}: loadings >= .30 (largest first; all in --json){used}", *basis]
    for j, fac in enumerate(x.factors):
        big = sorted(
            ((abs(v[j]), i, v[j]) for i, v in x.loadings.items() if abs(v[j]) >= 0.3), reverse=True
        )
        shown = ", ".join(f"{i} {v:+.2f}" for _, i, v in big[:6])
        more = f" (+{len(big) - 6} more)" if len(big) > 6 else ""
        out.append(f"    {fac}: {shown or 'none'}{more}")
    if x.heywood:
        out.append(
            f"    Heywood: {'; '.join(x.heywood[:5])}" + (" ..." if len(x.heywood) > 5 else "")
        )
    return out + (congruence_text(x.congruence) if x.congruence is not None else [])


def congruence_text(x: Congruence) -> list[str]:
    """Tucker's congruence of an EFA with its reading and caveats."""
    src = f" with {x.source}" if x.source else ""
    if x.phi is None:
        return [f"    Tucker's congruence{src}: undefined ({x.reason})"]
    match, reading = x.match or {}, x.reading or {}
    shown = ", ".join(
        f"{k} ~ {match[k]} {v:.3f} ({reading[k]})" if v is not None else f"{k} unmatched"
        for k, v in x.phi.items()
    )
    out = [
        f"    Tucker's congruence{src} over {x.items} items: {shown}",
        f"      reading: {READING}",
    ]
    if x.note:
        out.append(f"      note: {x.note}")
    return out


def invariance_text(entry: InvarianceEntry) -> list[str]:
    """The ladder as a small table with the decisions."""
    inv = entry.result
    groups = ", ".join(f"{g} {n}" for g, n in inv.groups.items())
    used = "" if inv.rows is None else f"; {inv.rows.text()}"
    out = [
        f"  invariance by {entry.group} ({groups or 'no groups'}){used}"
        + (f": undefined ({inv.reason})" if inv.reason else "")
    ]
    if not inv.steps:
        return out
    out.append(
        f"    {'level':<10} {'chi2':>8} {'df':>4} {'CFI':>6} {'RMSEA':>6} "
        f"{'dchi2':>7} {'ddf':>3} {'p':>6} {'dCFI':>7} {'dRMSEA':>7}  decision"
    )
    for s in inv.steps:
        f = s.fit
        out.append(
            f"    {s.level:<10} {_n(f.chisq):>8} {f.df:>4} {_n(f.cfi, 3):>6} "
            f"{_n(f.rmsea, 3):>6} {_n(s.delta_chisq):>7} {s.delta_df or '':>3} "
            f"{_n(s.delta_pvalue, 3):>6} {_n(s.delta_cfi, 3, True):>7} "
            f"{_n(s.delta_rmsea, 3, True):>7}  {_decision(s)}"
        )
    out.append(
        "    rejected: CFI drop >= .01 (Cheung & Rensvold 2002), RMSEA rise >= .015 (Chen 2007)"
    )
    return out


def _decision(s: InvarianceStep) -> str:
    if s.holds is None:
        return "baseline" if s.level == "configural" else "undecided"
    if s.holds:
        return "holds"
    why = [
        w
        for w, hit in (("CFI", "CFI drops" in s.decision), ("RMSEA", "RMSEA rises" in s.decision))
        if hit
    ]
    return f"rejected ({', '.join(why)})"
