"""The typed records of a population task's entry (``runs.task_analysis``) and of the whole
``psym analyze`` population section (``runs.population_analysis``).

The consumers (``task_text``, the report) read these attributes; ``to_json()`` gives the JSON
of the section data (``psym analyze --json``, analysis.json, ``--responses --json``): the keys
of the contract of issue 25, in their order, an optional part (``efa``, ``cfa_model``,
``invariance``, ``irt``) absent when None. The parts reuse the engine's records (``CFAResult``,
``ScaleReliability``, ``Criterion``, ``ParallelAnalysis``, ``InvarianceResult``, ``GRMResult``,
``MTMM``); the records here add what the entry holds beyond them (the scale and label of a
criterion, the reflected EFA loadings with Tucker's congruence, the norm of a distribution).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psymetrics_core.analysis.population.cfa import CFAResult
from psymetrics_core.analysis.population.criterion import CriterionRow
from psymetrics_core.analysis.population.diagnostics import VarianceRatio
from psymetrics_core.analysis.population.dimensionality import ParallelAnalysis
from psymetrics_core.analysis.population.invariance import InvarianceResult
from psymetrics_core.analysis.population.irt import GRMResult, irt_json
from psymetrics_core.analysis.population.missing import RowsUsed
from psymetrics_core.analysis.population.mtmm import MTMM
from psymetrics_core.analysis.population.reliability import ScaleReliability

__all__ = [
    "CriterionRow",
    "VarianceRatio",
    "Norm",
    "Distribution",
    "HumanParts",
    "Congruence",
    "EFAEntry",
    "CFAModelEntry",
    "InvarianceEntry",
    "StructureParts",
    "PopulationEntry",
    "PopulationAnalysis",
    "reliability_json",
    "cfa_json",
    "parallel_json",
]


def rows_json(rows: RowsUsed | None) -> dict[str, Any] | None:
    """The rows an analysis used (``missing.RowsUsed``) as JSON."""
    return None if rows is None else rows.to_json()


def reliability_json(r: ScaleReliability) -> dict[str, Any]:
    return {
        "scale": r.scale,
        "n": r.n,
        "k": r.k,
        "n_personas": r.n_clusters,
        "reason": r.reason,
        "coefficients": [c.__dict__ for c in r.coefficients],
        "rows": rows_json(r.rows),
    }


def cfa_json(c: CFAResult) -> dict[str, Any]:
    fit = None if c.fit is None else dict(c.fit.__dict__)
    return {
        "n": c.n,
        "fit": fit,
        "reason": c.reason,
        "heywood": c.heywood,
        "loadings": [x.__dict__ for x in c.loadings],
        "rows": rows_json(c.rows),
    }


def parallel_json(pa: ParallelAnalysis) -> dict[str, Any]:
    return {
        "n_factors": pa.n_factors,
        "observed": list(pa.observed),
        "random_quantile": list(pa.random_quantile),
        "quantile": pa.quantile,
        "reason": pa.reason,
        "kind": pa.kind,
        "n": None if pa.rows is None else pa.rows.n,
        "rows": rows_json(pa.rows),
        "margin": pa.margin,
        "miss": pa.miss,
    }


@dataclass(frozen=True)
class Norm:
    """The human norm a distribution is drawn against."""

    mean: float
    sd: float
    source: str
    group: str


@dataclass(frozen=True)
class Distribution:
    """The respondents' scale scores (sorted) and the norm on their metric (None: none)."""

    scores: list[float]
    norm: Norm | None

    def to_json(self) -> dict[str, Any]:
        norm = None if self.norm is None else dict(self.norm.__dict__)
        return {"scores": self.scores, "norm": norm}


@dataclass(frozen=True)
class HumanParts:
    """The entry's parts against people (``humans.human_diagnostics``)."""

    variance_ratio: list[VarianceRatio]
    acquiescence: float | None
    acquiescence_reason: str | None
    distributions: dict[str, Distribution]


@dataclass(frozen=True)
class Congruence:
    """Tucker's congruence of an EFA with the instrument's human loadings (``phi`` per human
    factor, None: unmatched; ``phi`` None as a whole with ``reason``)."""

    phi: dict[str, float | None] | None = None
    reason: str | None = None
    source: str | None = None
    match: dict[str, str | None] | None = None
    reading: dict[str, str | None] | None = None
    items: int | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "congruence": self.phi,
            "congruence_reason": self.reason,
            "congruence_source": self.source,
            "congruence_match": self.match,
            "congruence_reading": self.reading,
            "congruence_items": self.items,
            "congruence_note": self.note,
        }


@dataclass
class EFAEntry:
    """The EFA of the entry: loadings per item (each factor reflected to a positive sum),
    the factor correlations (oblique rotations) and Tucker's congruence."""

    n_factors: int | None
    rotation: str | None
    method: str = "ml"
    loadings: dict[str, list[float]] | None = None
    factors: list[str] | None = None
    factor_corr: list[list[float]] | None = None
    reason: str | None = None
    congruence: Congruence | None = None
    heywood: list[str] = field(default_factory=list)
    rows: RowsUsed | None = None
    basis: str | None = None  # --efa auto: how parallel analysis chose the count

    def to_json(self) -> dict[str, Any]:
        out = {
            "n_factors": self.n_factors,
            "rotation": self.rotation,
            "method": self.method,
            "loadings": self.loadings,
            "factors": self.factors,
            "factor_corr": self.factor_corr,
            "reason": self.reason,
            "heywood": self.heywood,
            "n": None if self.rows is None else self.rows.n,
            "rows": rows_json(self.rows),
            "basis": self.basis,
        }
        return out | (self.congruence.to_json() if self.congruence is not None else {})


@dataclass(frozen=True)
class CFAModelEntry:
    """The CFA of the ``--cfa-model`` file (``model``: its syntax, ``file``: its path)."""

    model: str
    file: str
    result: CFAResult

    def to_json(self) -> dict[str, Any]:
        r = self.result
        return {
            "model": self.model,
            "file": self.file,
            "n": r.n,
            "fit": None if r.fit is None else dict(r.fit.__dict__),
            "loadings": [x.__dict__ for x in r.loadings],
            "heywood": r.heywood,
            "reason": r.reason,
            "rows": rows_json(r.rows),
        }


@dataclass(frozen=True)
class InvarianceEntry:
    """The invariance ladder across the groups of ``group`` (what was grouped by)."""

    group: str
    result: InvarianceResult

    def to_json(self) -> dict[str, Any]:
        res = self.result
        return {
            "group": self.group,
            "groups": dict(res.groups),
            "steps": [dict(s.__dict__, fit=dict(s.fit.__dict__)) for s in res.steps],
            "reason": res.reason,
            "rows": rows_json(res.rows),
        }


@dataclass(frozen=True)
class StructureParts:
    """The entry's structural parts (``structure.structure_analysis``)."""

    parallel_analysis: ParallelAnalysis
    efa: EFAEntry | None = None
    cfa_model: CFAModelEntry | None = None
    invariance: InvarianceEntry | None = None


@dataclass
class PopulationEntry:
    """One questionnaire task's entry of the population section."""

    n_respondents: int
    n_personas: int
    parse_rate: float | None
    constant_items: list[str]
    straightlining_share: float | None
    reasons: dict[str, str]
    reliability: list[ScaleReliability]
    cfa: dict[str, CFAResult]
    criterion: list[CriterionRow]
    human: HumanParts
    structure: StructureParts
    irt: dict[str, GRMResult] | None = None
    clustering: str | None = None  # the caveat when respondents share personas
    missing: str = "listwise"  # --missing: the policy of every analysis of the entry
    source: str = "runs"  # runs (simulated respondents) or responses (a file of answers)

    def to_json(self) -> dict[str, Any]:
        h, s = self.human, self.structure
        answered = "cells_answered" if self.source == "responses" else "parse_rate"
        out: dict[str, Any] = {
            "n_respondents": self.n_respondents,
            "n_clusters" if self.source == "responses" else "n_personas": self.n_personas,
            "clustering": self.clustering,
            answered: self.parse_rate,
            "constant_items": self.constant_items,
            "straightlining_share": self.straightlining_share,
            "reasons": dict(self.reasons),
            "reliability": [reliability_json(r) for r in self.reliability],
            "cfa": {k: cfa_json(c) for k, c in self.cfa.items()},
            "criterion": [c.to_json() for c in self.criterion],
            "variance_ratio": [v.to_json() for v in h.variance_ratio],
            "acquiescence": h.acquiescence,
            "acquiescence_reason": h.acquiescence_reason,
            "distributions": {k: d.to_json() for k, d in h.distributions.items()},
            "parallel_analysis": parallel_json(s.parallel_analysis),
            "missing": self.missing,
            "source": self.source,
        }
        parts = (("efa", s.efa), ("cfa_model", s.cfa_model), ("invariance", s.invariance))
        out.update({k: v.to_json() for k, v in parts if v is not None})
        return out | ({"irt": irt_json(self.irt)} if self.irt is not None else {})


@dataclass
class PopulationAnalysis:
    """The population section: each task's entry, the section-level MTMM and the text."""

    tasks: dict[str, PopulationEntry] = field(default_factory=dict)
    mtmm: MTMM | None = None
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {t: e.to_json() for t, e in self.tasks.items()}
        return out | ({"mtmm": self.mtmm.to_json()} if self.mtmm is not None else {})
