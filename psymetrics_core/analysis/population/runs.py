"""Population runs (``psym eval --population``) as analysable data, and their ``psym analyze``
section.

Each administration of a task to one respondent in one cell and repeat is one row of answers
(respondent = cell + repeat; its persona = the cluster, so several prompt variants of one persona
are not counted as independent people); the respondent's labels come with its samples. The
section reports, per questionnaire task: diagnostics (parse rate, items that never vary,
straight-lining), reliability per scale (alpha, omega with naive and persona-clustered
intervals), one CFA per scale, and criterion validity of each scale against the label of the same
name (or the pairs given with ``--criterion SCALE=FIELD``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psymetrics_core.analysis.population.cfa import cfa_by_scale
from psymetrics_core.analysis.population.criterion import criterion_row, with_composites
from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.diagnostics import diagnose, scale_scores
from psymetrics_core.analysis.population.entry import (
    CriterionRow,
    PopulationAnalysis,
    PopulationEntry,
)
from psymetrics_core.analysis.population.fitstats import FitIndices
from psymetrics_core.analysis.population.humans import human_diagnostics, human_text
from psymetrics_core.analysis.population.irt import graded_response, irt_text, require_irt
from psymetrics_core.analysis.population.missing import POLICIES, RowsUsed
from psymetrics_core.analysis.population.mtmm import (
    TraitTable,
    mtmm_part,
    mtmm_text,
    trait_table,
)
from psymetrics_core.analysis.population.mtmm_methods import method_mtmm, method_note
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.population.population_data import PopulationData
from psymetrics_core.analysis.population.quiet import quiet_analysis
from psymetrics_core.analysis.population.reliability import Coefficient, scale_reliability
from psymetrics_core.analysis.population.structure import (
    check_options,
    structure_analysis,
    structure_text,
)
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Instrument
from psymetrics_core.contracts.analyses import AnalysisSection
from psymetrics_core.records.read import iter_records
from psymetrics_core.records.samples import SampleRecord

__all__ = [
    "PopulationData",
    "read_population_runs",
    "check_criterion",
    "check_population_options",
    "PreparedRuns",
    "criterion_table",
    "population_section",
    "population_analysis",
    "present_structure",
    "task_analysis",
    "task_text",
]


def read_population_runs(run_dirs: Sequence[Path]) -> dict[str, PopulationData]:
    """The population samples of ``run_dirs`` by questionnaire task (none: not a population
    run)."""
    rows: dict[str, list[tuple[str, str, str, float]]] = {}
    labels: dict[str, dict[str, dict[str, Any]]] = {}
    counts: dict[str, list[int]] = {}
    forms: dict[str, set[str]] = {}
    cells: dict[str, dict[str, dict[str, str]]] = {}
    for run in run_dirs:
        path = Path(run) / "samples.jsonl"
        if not path.is_file():
            continue
        records = iter_records(path, SampleRecord, what="samples file", schema="samples")
        for _, _row, rec in records:
            who = _respondent(rec.condition_info)
            if who is None or rec.kind != "questionnaire":
                continue
            key = f"{run}|{rec.condition}|{rec.repeat}"
            value = float(rec.answer) if rec.answer is not None else math.nan
            rows.setdefault(rec.task, []).append((key, who["respondent"], rec.item, value))
            labels.setdefault(rec.task, {})[key] = dict(who.get("labels") or {})
            cells.setdefault(rec.task, {})[key] = {"run": str(run), "condition": _cell(rec)}
            c = counts.setdefault(rec.task, [0, 0])
            c[0] += 1
            c[1] += rec.answer is not None
            forms.setdefault(rec.task, set()).add(rec.form)
    return {
        task: _data(task, r, labels[task], counts[task], forms[task], cells[task])
        for task, r in rows.items()
    }


def _cell(rec: SampleRecord) -> str:
    """The sample's condition cell without its respondent ("original" when nothing else)."""
    info = rec.condition_info
    mine = {n for n, v in info.items() if isinstance(v, Mapping) and "respondent" in v}
    return "+".join(c for c in rec.conditions if c not in mine) or "original"


def _respondent(info: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for value in info.values():
        if isinstance(value, Mapping) and isinstance(value.get("respondent"), str):
            return value
    return None


def _data(
    task: str,
    rows: list[tuple[str, str, str, float]],
    labels: dict[str, dict[str, Any]],
    counts: list[int],
    forms: set[str],
    cells: dict[str, dict[str, str]] | None = None,
) -> PopulationData:
    df = pd.DataFrame(rows, columns=["key", "persona", "item", "value"])
    if df.duplicated(["key", "item"]).any():
        dup = df[df.duplicated(["key", "item"])].iloc[0]
        raise PsymError(f"task {task}: respondent {dup['key']} answers item {dup['item']} twice")
    values = df.pivot(index="key", columns="item", values="value")
    persona = df.drop_duplicates("key").set_index("key")["persona"].reindex(values.index)
    lab = pd.DataFrame.from_dict(labels, orient="index").reindex(values.index)
    cell = None if cells is None else pd.DataFrame.from_dict(cells, orient="index")
    return PopulationData(
        task,
        values,
        persona,
        lab,
        counts[0],
        counts[1],
        forms,
        None if cell is None else cell.reindex(values.index),
    )


def criterion_table(
    data: PopulationData,
    structure: ScaleStructure,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> list[CriterionRow]:
    """Criterion validity of each scale against a label: the given ``pairs`` ((scale, label
    field), every one kept, a scale paired with several labels included), else every scale
    whose name is a label field (``criterion.criterion_row``: AUC for
    two-valued labels, numbers or text, else Spearman's rho; at persona level when personas
    have several respondents)."""
    check_criterion(data, structure, pairs)
    resp = Responses(data.values, data.persona)
    scores = scale_scores(resp, structure)
    if pairs is None:
        pairs = [(s, s) for s in scores if s in data.labels.columns]
    out: list[CriterionRow] = []
    for scale, fld in dict.fromkeys(pairs):  # a pair given twice is one row
        out.append(
            criterion_row(
                scale, fld, np.asarray(scores[scale], dtype=float), data.labels[fld], data.persona
            )
        )
    return out


def check_criterion(
    data: PopulationData,
    structure: ScaleStructure,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> None:
    """One line for the first ``--criterion`` pair naming a scale ``structure`` lacks or a
    label the respondents of ``data`` lack."""
    for scale, fld in pairs or ():
        if scale not in structure.scales:
            raise PsymError(f"--criterion {scale}={fld}: task {data.task} has no scale {scale!r}")
        if fld not in data.labels.columns:
            raise PsymError(f"--criterion {scale}={fld}: the respondents have no label {fld!r}")


def check_population_options(
    run_dirs: Sequence[Path],
    instruments: Mapping[str, Instrument],
    options: PopulationOptions | None = None,
) -> PreparedRuns | None:
    """Every population option given checked against ``run_dirs`` (one line), so that
    ``psym analyze`` refuses a bad one before it computes anything: the runs as read and
    checked (hand them to ``population_section``: read once), or None when no option is given
    (nothing checked, nothing read) or no run is a population run."""
    if options is not None and options.asked():
        return _prepare(run_dirs, instruments, options)
    return None


@dataclass(frozen=True)
class PreparedRuns:
    """The population runs read (``found``), each installed questionnaire's scale structure
    (``structures``: the items administered) and the trait table, every option checked
    (``check_population_options``'s result; ``run_dirs`` and ``options``: what it was for)."""

    found: dict[str, PopulationData]
    structures: dict[str, ScaleStructure]
    table: TraitTable
    run_dirs: tuple[Path, ...] = ()
    options: PopulationOptions | None = None


def _prepare(
    run_dirs: Sequence[Path], instruments: Mapping[str, Instrument], options: PopulationOptions
) -> PreparedRuns | None:
    """The runs read and every option checked, before any analysis (None: no population run)."""
    found = read_population_runs(run_dirs)
    if not found:
        if options.asked():
            raise PsymError(
                f"{options.asked()}: no run here was given to a population (--population)"
            )
        return None
    check_options(found, options.structure)
    table = trait_table(options.mtmm, instruments)
    structures: dict[str, ScaleStructure] = {}
    for task, pop in sorted(found.items()):
        inst = instruments.get(task)
        if inst is None:
            continue
        form = sorted(pop.forms)[0]
        structures[task] = present_structure(ScaleStructure.from_instrument(inst, form), pop)
        scales = with_composites(structures[task], inst, form, list(pop.values.columns))
        check_criterion(pop, scales, options.criterion)
    if options.irt and structures:
        require_irt()
    return PreparedRuns(found, structures, table, tuple(run_dirs), options)


def population_section(
    run_dirs: Sequence[Path],
    instruments: Mapping[str, Instrument],
    options: PopulationOptions | None = None,
    ready: PreparedRuns | None = None,
) -> AnalysisSection | None:
    """The ``psym analyze`` section of population runs (None when no run is one): the text
    and the JSON of ``population_analysis`` (``ready``: ``check_population_options``'s)."""
    res = population_analysis(run_dirs, instruments, options, ready)
    if res is None:
        return None
    return AnalysisSection("population", "Population psychometrics", res.text, res.to_json())


@quiet_analysis
def population_analysis(
    run_dirs: Sequence[Path],
    instruments: Mapping[str, Instrument],
    options: PopulationOptions | None = None,
    ready: PreparedRuns | None = None,
) -> PopulationAnalysis | None:
    """The population analyses of ``run_dirs`` (None when no run is a population run, or no
    task of them an installed questionnaire), computing what ``options`` asks for (MTMM: the
    shipped trait table unless ``options.mtmm``). ``ready``: the runs already read and checked
    for these runs and options (``check_population_options``), else read here."""
    options = options or PopulationOptions()
    if ready is None or ready.run_dirs != tuple(run_dirs) or ready.options != options:
        ready = _prepare(run_dirs, instruments, options)  # every option checked: then the work
    if ready is None:
        return None
    opts = options.structure and options.structure.for_runs(run_dirs)
    out = PopulationAnalysis()
    lines: list[str] = []
    for task, structure in ready.structures.items():
        pop, inst = ready.found[task], instruments[task]
        entry = task_analysis(pop, structure, replace(options, structure=opts), inst)
        out.tasks[task] = entry
        lines += task_text(task, entry)
    if not out.tasks:
        return None
    out.mtmm = mtmm_part(ready.found, ready.structures, ready.table, given=options.mtmm is not None)
    by_method = None if options.mtmm is not None else method_mtmm(ready.found, ready.structures)
    if by_method is not None:  # the same personas measured by 2+ methods: methods are the facet
        out.mtmm = by_method
        lines.append(method_note(by_method, ready.found))
    if out.mtmm is not None:
        lines += mtmm_text(out.mtmm)
    out.text = "\n".join(lines)
    return out


def present_structure(structure: ScaleStructure, pop: PopulationData) -> ScaleStructure:
    """``structure`` restricted to the items the run administered (``--limit``)."""
    cols = set(pop.values.columns)
    scales = {s: tuple(i for i in its if i in cols) for s, its in structure.scales.items()}
    return ScaleStructure(
        {s: its for s, its in scales.items() if its},
        {i: r for i, r in structure.reverse.items() if i in cols},
    )


@quiet_analysis
def task_analysis(
    pop: PopulationData,
    structure: ScaleStructure,
    options: PopulationOptions | None = None,
    instrument: Instrument | None = None,
    source: str = "runs",
) -> PopulationEntry:
    """One task's entry of the section: diagnostics, reliability, one CFA per scale, criterion
    validity, the diagnostics against people (``instrument``'s norms) and what ``options``
    asks for beyond them, every analysis under ``options.missing``. ``source``: runs
    (simulated respondents of personas) or responses (a file of people's answers)."""
    options = options or PopulationOptions()
    resp = Responses(pop.values, pop.persona)
    missing = options.missing
    if missing not in POLICIES:
        raise PsymError(f"--missing {missing!r}: one of {', '.join(POLICIES)}")
    form = sorted(pop.forms or {"original"})[0]
    crit = criterion_table(  # composite scales (total) too: psym show lists them; a bad pair:
        pop,  # one line at once, before the analyses
        with_composites(structure, instrument, form, list(pop.values.columns)),
        options.criterion,
    )
    grm = graded_response(resp, structure, missing=missing) if options.irt else None  # at once
    diag = diagnose(resp, structure)
    rel = scale_reliability(resp, structure, n_boot=options.n_boot, missing=missing)
    cfas = cfa_by_scale(resp, structure, missing)
    return PopulationEntry(
        n_respondents=int(len(pop.values)),
        n_personas=int(pop.persona.nunique()),
        clustering=_clustering(len(pop.values), int(pop.persona.nunique()), source),
        parse_rate=pop.n_parsed / pop.n_lines if pop.n_lines else None,
        constant_items=diag.constant_items,
        straightlining_share=diag.straightlining_share,
        reasons={k: v for k, v in diag.reasons.items() if k != "acquiescence"},  # see human
        reliability=list(rel),
        cfa=dict(cfas),
        criterion=crit,
        # against people: variance ratio vs the human norms, acquiescence, score distributions
        human=human_diagnostics(resp, structure, instrument, sorted(pop.forms or {"original"})[0]),
        structure=structure_analysis(
            pop,
            structure,
            options.structure,
            human=instrument.human_loadings if instrument else None,
            missing=missing,
        ),
        irt=grm,
        missing=missing,
        source=source,
    )


def _num(x: float | None, d: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    out = f"{x:.{d}f}"
    return out[1:] if out.startswith("-") and float(out) == 0 else out  # no "-0.00"


def _clustering(n: int, personas: int, source: str = "runs") -> str | None:
    """The caveat of respondents that are not independent (several per persona, or per
    cluster of a response file)."""
    if n <= personas:
        return None
    who = (
        f"{n} respondents fall in {personas} clusters (the --cluster column)"
        if source == "responses"
        else f"{n} respondents are prompt variants or repeats of {personas} personas"
    )
    unit = "cluster" if source == "responses" else "persona"
    return (
        f"{who}: "
        f"reliability has {unit}-clustered intervals and criterion validity is per {unit}, "
        "but chi-square, RMSEA, parallel analysis, EFA and invariance treat every "
        "respondent as independent (identical repeats inflate them)"
    )


def reliability_text(coefficients: Sequence[Coefficient], rows: RowsUsed | None) -> str:
    """alpha, lambda 6 and omega with their naive 95% intervals, the persona-clustered ones
    where personas have several respondents, and the rows used (n, and why rows were left
    out)."""
    names = {"alpha": "alpha", "lambda6": "lambda6", "omega_total": "omega"}
    parts = []
    for c in coefficients:
        ci = c.cluster_ci95 or c.naive_ci95
        kind = " clustered" if c.cluster_ci95 else ""
        iv = f" [{_num(ci[0])}, {_num(ci[1])}{kind}]" if ci else ""
        parts.append(f"{names.get(c.name, c.name)} {_num(c.value)}{iv}")
    return " ".join(parts) + ("" if rows is None else f", {rows.text()}")


def fit_text(f: FitIndices | None, reason: str | None, heywood: Sequence[str]) -> str:
    """One CFA's fit on one line: the indices, why CFI/TLI are undefined, Heywood cases."""
    if f is None:
        return f"undefined ({reason})"
    out = (
        f"chi2 {_num(f.chisq)} df {f.df} CFI {_num(f.cfi, 3)} TLI {_num(f.tli, 3)} "
        f"RMSEA {_num(f.rmsea, 3)} SRMR {_num(f.srmr, 3)}"
    )
    if f.reason:
        out += f" (CFI, TLI undefined: {f.reason})"
    if f.caveat:  # (the no-structure caveat repeats the reason: said once)
        out += "; no verdict: " + (f.caveat.replace(f"{f.reason}; ", "") if f.reason else f.caveat)
    if heywood:
        out += f"; Heywood: {'; '.join(heywood[:3])}" + (" ..." if len(heywood) > 3 else "")
    return out


MISSING_TEXT = {
    "listwise": "each analysis on the rows that answered all its items",
    "pairwise": "each correlation on the rows that answered both items; n: the smallest pair count",
    "fiml": "every answer in the likelihood (MAR); analyses without a full-information form say so",
}


def _head(task: str, e: PopulationEntry) -> str:
    """The entry's first line: respondents and personas with the parse rate (runs), or
    respondents with the share of cells answered (a response file)."""
    straight = f"straight-lining {_num(e.straightlining_share)}"
    if e.source == "responses":
        clusters = f" ({e.n_personas} clusters)" if e.n_personas < e.n_respondents else ""
        return (
            f"{task}: {e.n_respondents} respondents{clusters}, cells answered "
            f"{_num(e.parse_rate)}, {straight}"
        )
    return (
        f"{task}: {e.n_respondents} respondents ({e.n_personas} personas), parse rate "
        f"{_num(e.parse_rate)}, {straight}"
    )


def task_text(task: str, e: PopulationEntry) -> list[str]:
    """The plain-text lines of a task's entry."""
    out = [_head(task, e), f"  missing answers: {e.missing} ({MISSING_TEXT[e.missing]})"]
    if e.clustering:
        out.append(f"  note: {e.clustering}")
    if e.constant_items:
        out.append(f"  items that never vary: {', '.join(e.constant_items)}")
    out += human_text(e.human)
    for r in e.reliability:
        if r.reason:
            used = "" if r.rows is None else f", {r.rows.text()}"
            out.append(f"  {r.scale}: reliability undefined ({r.reason}){used}")
            continue
        out.append(f"  {r.scale}: " + reliability_text(r.coefficients, r.rows))
    for scale, c in e.cfa.items():
        used = "" if c.rows is None else f", {c.rows.text()}"
        out.append(f"  CFA {scale}: " + fit_text(c.fit, c.reason, c.heywood) + used)
    out += structure_text(e.structure)
    for row in e.criterion:
        k = row.result
        ci = "" if not k.ci95 else f" [{_num(k.ci95[0])}, {_num(k.ci95[1])}]"
        why = f" ({k.reason})" if k.reason else ""
        unit = " personas" if row.unit == "persona" else ""
        pos = f" (positive: {row.positive})" if row.positive else ""
        out.append(
            f"  criterion {row.scale} ~ {row.label}{pos}: {k.statistic} "
            f"{_num(k.value)}{ci}, n {k.n}{unit}{why}"
        )
    return out + (irt_text(e.irt) if e.irt is not None else [])
