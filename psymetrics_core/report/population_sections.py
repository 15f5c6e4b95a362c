"""The report's population section (runs of ``psym eval --population``): score distributions
against the human norm, CFA loadings and fit with the conventional cut-offs labelled, the
invariance ladder, criterion validity, and (when the analysis gives them) parallel analysis,
EFA, graded response models and the multitrait-multimethod matrix.

The numbers come from ``analysis.population.runs.population_analysis`` (what ``psym analyze``
prints), as typed records (``analysis.population.entry``); an optional part is None when
absent. A number that is None shows "—" with its reason as the cell's title.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psymetrics_core.analysis.population.cfa import CFAResult
from psymetrics_core.analysis.population.dimensionality import ParallelAnalysis
from psymetrics_core.analysis.population.entry import (
    Congruence,
    CriterionRow,
    Distribution,
    EFAEntry,
    InvarianceEntry,
    PopulationEntry,
    VarianceRatio,
)
from psymetrics_core.analysis.population.fitstats import FitIndices
from psymetrics_core.analysis.population.humans import FLAT_RATIO
from psymetrics_core.analysis.population.irt import GRMResult
from psymetrics_core.analysis.population.mtmm import MTMM
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.population.runs import MISSING_TEXT, population_analysis
from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.population_summary import is_population_run
from psymetrics_core.records.read import RunData
from psymetrics_core.report import figures as F
from psymetrics_core.report.figure_sections import flagged_scores
from psymetrics_core.report.values import fmt, num

__all__ = ["FitCutoff", "FIT_CUTOFFS", "population_context", "fit_verdict"]


@dataclass(frozen=True)
class FitCutoff:
    """A conventional cut-off of one fit index: ``good`` and ``acceptable`` bounds."""

    key: str  # the FitIndices field
    name: str
    higher_is_better: bool
    good: float
    acceptable: float | None
    source: str
    labels: tuple[str, str, str] = ("good", "acceptable", "poor")

    def rule(self) -> str:
        op = "≥" if self.higher_is_better else "≤"
        acc = "" if self.acceptable is None else f"; {op} {self.acceptable:g} {self.labels[1]}"
        return f"{op} {self.good:g} {self.labels[0]}{acc}; else {self.labels[2]}"


HU_BENTLER = "Hu & Bentler (1999)"
# The one table of the conventional cut-offs the report labels fit indices with.
FIT_CUTOFFS: tuple[FitCutoff, ...] = (
    FitCutoff("cfi", "CFI", True, 0.95, 0.90, HU_BENTLER),
    FitCutoff("tli", "TLI", True, 0.95, 0.90, HU_BENTLER),
    FitCutoff("rmsea", "RMSEA", False, 0.06, 0.08, f"{HU_BENTLER}; .08: Browne & Cudeck (1993)"),
    FitCutoff("srmr", "SRMR", False, 0.08, None, HU_BENTLER),
    FitCutoff(
        "pvalue",
        "χ² p",
        True,
        0.05,
        None,
        "exact-fit test at α = .05 (rejects almost any model at large n)",
        ("not rejected", "", "rejected"),
    ),
)
_CUT = {c.key: c for c in FIT_CUTOFFS}


def fit_verdict(key: str, value: float | None) -> str:
    """The cut-off label of ``value`` of the fit index ``key`` ("" when undefined)."""
    c = _CUT[key]
    if value is None:
        return ""
    sign = 1 if c.higher_is_better else -1
    if sign * value >= sign * c.good:
        return c.labels[0]
    if c.acceptable is not None and sign * value >= sign * c.acceptable:
        return c.labels[1]
    return c.labels[2]


def _cell(value: Any, digits: int = 2, reason: str | None = None, cls: str = "") -> dict[str, str]:
    """A table cell: the number, or "—" with the reason as its title."""
    v = num(value)
    text = "—" if v is None else f"{v:.{digits}f}"
    title = (reason or "undefined") if v is None else ""
    return {"text": text, "title": title, "cls": cls}


def population_context(
    runs: Sequence[RunData],
    session: Session,
    population: PopulationOptions | None = None,
) -> dict[str, Any]:
    """The template's population data: {"tasks": [...], "mtmm": tables, "notes": [...],
    "cutoffs": [...]}; no tasks when no run is a population run."""
    out: dict[str, Any] = {"tasks": [], "mtmm": None, "notes": [], "cutoffs": _cutoff_rows()}
    dirs = [r.path for r in runs if is_population_run(r.results)]
    if not dirs:
        if population is not None and population.asked():
            raise PsymError(
                f"{population.asked()}: no run here was given to a population (--population)"
            )
        return out
    sec = population_analysis(dirs, session.instruments(), population)
    if sec is None:
        out["notes"].append("no population task of these runs is an installed questionnaire")
        return out
    flagged = flagged_scores(runs)
    out["tasks"] = [_task_block(t, e, flagged.get(t, {})) for t, e in sec.tasks.items()]
    out["mtmm"] = None if sec.mtmm is None else _mtmm(sec.mtmm)
    return out


def _cutoff_rows() -> list[dict[str, str]]:
    return [{"name": c.name, "rule": c.rule(), "source": c.source} for c in FIT_CUTOFFS]


def _task_block(
    task: str, e: PopulationEntry, flagged: Mapping[str, list[float]]
) -> dict[str, Any]:
    h = e.human
    return {
        "task": task,
        "summary": [
            ("respondents", str(e.n_respondents), ""),
            ("personas", str(e.n_personas), ""),
            ("parse rate", fmt(e.parse_rate), ""),
            (
                "straight-lining share",
                fmt(e.straightlining_share),
                e.reasons.get("straightlining_share", ""),
            ),
            (
                "acquiescence (mean raw answer − scale midpoint)",
                fmt(h.acquiescence),
                h.acquiescence_reason or "",
            ),
            ("items that never vary", ", ".join(e.constant_items) or "none", ""),
            ("missing answers (--missing)", e.missing, MISSING_TEXT[e.missing]),
        ],
        "ratios": _ratios(h.variance_ratio),
        "figure": _figure(task, h.distributions, flagged),
        "loadings": _loadings(e),
        "fit": _fit_rows(e),
        "invariance": _invariance(e.structure.invariance),
        "criterion": _criterion(e.criterion),
        "parallel": _parallel(e.structure.parallel_analysis),
        "efa": _efa(e.structure.efa),
        "irt": _irt(e.irt),
    }


def _ratios(rows: Sequence[VarianceRatio]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        ratio = num(r.ratio)
        flat = ratio is not None and ratio < FLAT_RATIO
        out.append(
            {
                "scale": r.scale,
                "ratio": _cell(ratio, 2, r.reason, "fired" if flat else ""),
                "flat": flat,
                "population_sd": _cell(r.population_sd, 2, r.reason),
                "human_sd": _cell(r.human_sd, 2, r.reason),
                "reason": r.reason or "",
            }
        )
    return out


def _figure(
    task: str, dists: Mapping[str, Distribution], flagged: Mapping[str, list[float]]
) -> F.Figure | None:
    panels: list[tuple[str, Sequence[float], tuple[float, float, str] | None]] = []
    for scale, d in dists.items():
        scores = [float(x) for x in d.scores if num(x) is not None]
        n = d.norm
        norm = None if n is None else (float(n.mean), float(n.sd), str(n.group))
        panels.append((str(scale), scores, norm))
    if not panels:
        return None
    xs = [x for _, s, _ in panels for x in s] + [
        v for _, _, n in panels if n for v in (n[0] - 2 * n[1], n[0] + 2 * n[1])
    ]
    if not xs:
        return None
    lo, hi = min(xs), max(xs)
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    fig = F.population_figure(panels, lo, hi, flagged)
    alt = f"{task}: respondents' scale scores against the human norm: " + "; ".join(
        f"{s} n {len(v)}" + (f", norm {n[0]:g} ± {n[1]:g}" if n else ", no norm")
        for s, v, n in panels
    )
    groups = sorted({n[2] for _, _, n in panels if n})
    sources = sorted({str(d.norm.source) for d in dists.values() if d.norm is not None})
    caption = f"{task}: histogram (density) of the respondents' scale scores per scale. " + (
        f"Dashed curve and grey band: the human norm's normal density and mean ± 1 SD (group "
        f"{', '.join(groups)}; {'; '.join(sources)}); a bar over 4 times the curve's peak is "
        "clipped (marked)."
        if groups
        else "This instrument has no human norms: no norm curve."
    )
    if any(flagged.values()):
        n_bad = max(len(v) for v in flagged.values())
        caption += (
            f" Grey hatched bars: the {n_bad} respondents whose answer pattern is degenerate (a "
            "validity indicator beyond its threshold): their scores describe that pattern, not a "
            "personality."
        )
    return F.Figure(F.svg_of(fig, alt), caption, alt)


def _models(e: PopulationEntry) -> dict[str, CFAResult]:
    """The one-factor CFA per scale and the --cfa-model, if any."""
    models = dict(e.cfa)
    if e.structure.cfa_model is not None:
        models["model (--cfa-model)"] = e.structure.cfa_model.result
    return models


def _loadings(e: PopulationEntry) -> list[dict[str, Any]]:
    """Standardized loadings per scale's one-factor CFA (and the --cfa-model, if any)."""
    out = []
    for name, c in _models(e).items():
        heywood = [str(h) for h in c.heywood]
        rows = []
        for ld in c.loadings:
            item = str(ld.item)
            flags = [h for h in heywood if h.startswith(f"{item}:")]
            rows.append(
                {
                    "factor": ld.factor,
                    "item": item,
                    "std": _cell(ld.std, 3, cls="fired" if flags else ""),
                    "estimate": _cell(ld.estimate, 3),
                    "heywood": "; ".join(flags),
                }
            )
        out.append({"model": name, "rows": rows, "reason": c.reason or "", "heywood": heywood})
    return out


def _fit_cells(fit: FitIndices | None, reason: str | None) -> dict[str, Any]:
    def get(key: str) -> Any:
        return None if fit is None else getattr(fit, key)

    ci = get("rmsea_ci90")
    cells: dict[str, Any] = {
        "n": _cell(get("n"), 0, reason),
        "chisq": _cell(get("chisq"), 2, reason),
        "df": _cell(get("df"), 0, reason),
    }
    caveat = get("caveat")  # a saturated model, or no structure to fit: no verdicts
    cells["caveat"] = caveat or ""
    for c in FIT_CUTOFFS:
        v = num(get(c.key))
        verdict = "" if caveat else fit_verdict(c.key, v)
        cell = _cell(v, 3, reason, f"fit-{verdict.replace(' ', '-')}" if verdict else "")
        cell["verdict"] = verdict
        cells[c.key] = cell
    cells["rmsea"]["ci"] = (
        f"[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]"
        if isinstance(ci, list | tuple) and len(ci) == 2
        else ""
    )
    return cells


def _fit_rows(e: PopulationEntry) -> list[dict[str, Any]]:
    return [
        {
            "model": name,
            "reason": c.reason or "undefined",
            "undefined": c.fit is None,
            "n_rows": c.n,
            **_fit_cells(c.fit, c.reason),
        }
        for name, c in _models(e).items()
    ]


def _invariance(entry: InvarianceEntry | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    inv = entry.result
    steps = []
    for s in inv.steps:
        first = s.level == "configural"
        why = "the first step of the ladder" if first else (s.decision or "undefined")
        steps.append(
            {
                "level": s.level,
                **_fit_cells(s.fit, inv.reason),
                "delta_chisq": _cell(s.delta_chisq, 2, why),
                "delta_df": _cell(s.delta_df, 0, why),
                "delta_p": _cell(s.delta_pvalue, 3, why),
                "delta_cfi": _cell(s.delta_cfi, 3, why),
                "delta_rmsea": _cell(s.delta_rmsea, 3, why),
                "holds": "—" if s.holds is None else ("holds" if s.holds else "does not hold"),
                "decision": s.decision or "",
            }
        )
    groups = ", ".join(f"{g} (n {n})" for g, n in inv.groups.items())
    return {"group": entry.group, "groups": groups, "steps": steps, "reason": inv.reason or ""}


def _criterion(rows: Sequence[CriterionRow]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        r = row.result
        ci_text = f"[{fmt(r.ci95[0])}, {fmt(r.ci95[1])}]" if r.ci95 is not None else "—"
        out.append(
            {
                "scale": row.scale,
                "label": row.label,
                "statistic": "AUC" if r.statistic == "auc" else "Spearman's ρ",
                "value": _cell(r.value, 2, r.reason),
                "ci": ci_text,
                "n": r.n,
                "reason": r.reason or "",
            }
        )
    return out


def _parallel(pa: ParallelAnalysis) -> dict[str, Any]:
    obs, rnd = list(pa.observed), list(pa.random_quantile)
    rows = [
        {
            "k": i + 1,
            "observed": _cell(o, 3),
            "random": _cell(rnd[i] if i < len(rnd) else None, 3, "not simulated"),
            "kept": i < (pa.n_factors or 0),
        }  # the sequential rule: up to the first below
        for i, o in enumerate(obs)
    ]
    return {
        "n_factors": pa.n_factors,
        "quantile": fmt(pa.quantile),
        "kind": pa.kind,
        "used": "" if pa.rows is None else pa.rows.text(),
        "rows": rows,
        "reason": pa.reason or "",
    }


def _efa(efa: EFAEntry | None) -> dict[str, Any] | None:
    if efa is None:
        return None
    cg = efa.congruence or Congruence()
    cong = cg.phi or {}
    match, reading = cg.match or {}, cg.reading or {}
    rows = [
        {"item": item, "cells": [_cell(v, 2) for v in vals]}
        for item, vals in (efa.loadings or {}).items()
    ]
    return {
        "n_factors": efa.n_factors,
        "rotation": efa.rotation or "",
        "method": efa.method or "",
        "factors": [str(f) for f in efa.factors or []],
        "rows": rows,
        # keyed by the human factors, each with the EFA factor matched to it and the reading
        "congruence": [
            {
                "factor": f"{h} ~ {match[h]}" if match.get(h) else h,
                "phi": _cell(v, 3, "unmatched" if match else "no human loadings"),
                "reading": reading.get(h) or "",
            }
            for h, v in cong.items()
        ],
        "congruence_reason": "" if cong else (cg.reason or ""),
        "congruence_source": cg.source or "",
        "congruence_note": cg.note or "",
        "factor_corr": [[fmt(v) for v in row] for row in efa.factor_corr or []],
        "reason": efa.reason or "",
        "heywood": "; ".join(efa.heywood),
        "used": "" if efa.rows is None else efa.rows.text(),
        "basis": efa.basis or "",
    }


def _irt(irt: Mapping[str, GRMResult] | None) -> list[dict[str, Any]]:
    out = []
    for scale, m in (irt or {}).items():
        items = []
        for it in m.items:
            th = [fmt(t) for t in it.thresholds]
            items.append(
                {
                    "item": it.item,
                    "a": _cell(it.discrimination, 2),
                    "thresholds": ", ".join(th) or "—",
                }
            )
        out.append(
            {
                "scale": scale,
                "n": m.n,
                "model": "graded",
                "item_rows": items,
                "reason": m.reason or "",
            }
        )
    return out


def _mtmm(m: MTMM) -> dict[str, Any]:
    """The MTMM part as a lower-triangle matrix (validity diagonal marked), the validity
    values with their intervals and Campbell & Fiske's criteria counts."""
    if m.reason:
        return {"reason": m.reason, "names": [], "rows": [], "validity": [], "criteria": []}
    vs, matrix = m.variables, m.matrix or []
    rows = []
    for i, v in enumerate(vs):
        cells = []
        for j in range(i):
            same = v.trait == vs[j].trait
            cls = "validity" if same else ("monomethod" if v.method == vs[j].method else "")
            cells.append(_cell(matrix[i][j], reason="see the correlations' reasons", cls=cls))
        rows.append({"name": f"{v.method}.{v.scale}", "trait": v.trait, "cells": cells})
    validity = [
        {
            "trait": c.trait_a,
            "methods": f"{c.method_a} ~ {c.method_b}",
            "r": _cell(c.r, reason=c.reason),
            "n": c.n,
            "ci": "" if not c.ci95 else f"[{c.ci95[0]:.2f}, {c.ci95[1]:.2f}]",
        }
        for c in m.validity
    ]
    criteria = [
        {
            "criterion": c.criterion,
            "name": c.name,
            "holds": c.holds,
            "comparisons": c.comparisons,
            "reason": c.reason or "",
        }
        for c in m.criteria
    ]
    return {
        "reason": None,
        "table": m.table,
        "matched_by": m.matched_by,
        "n_matched": m.n_matched,
        "names": [r["name"] for r in rows],
        "rows": rows,
        "validity": validity,
        "criteria": criteria,
        "dropped": "; ".join(f"{t}: {why}" for t, why in m.dropped.items()),
    }
