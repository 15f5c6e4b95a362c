"""The core's analyses as ``register_analyses`` functions: each takes the ``AnalysisRequest``
and returns its ``AnalysisSection`` (or None when the runs have nothing for it)."""

from __future__ import annotations

from psymetrics_core.analysis.divergence_section import divergence_section
from psymetrics_core.analysis.ecological import validity_section
from psymetrics_core.analysis.population.runs import population_section
from psymetrics_core.analysis.report import analyze
from psymetrics_core.analysis.sections import AnalysisRequest
from psymetrics_core.contracts.analyses import AnalysisSection

__all__ = ["per_run", "ecological_validity", "method_divergence", "population"]


def per_run(request: AnalysisRequest) -> AnalysisSection:
    """The per-run tables (``report.analyze``); ``data`` is the body of the JSON report. Its
    text is empty: ``psym analyze`` prints it as tables (``cli.analyze_tables``)."""
    report = analyze(
        request.run_dirs,
        reference=request.reference or "original",
        nan_policy=request.nan_policy,
        baseline=request.baseline,
        fence_k=request.fence_k,
        hypotheses=request.hypotheses,
        deletion=request.deletion,
        session=request.session,
    )
    return AnalysisSection("per_run", "Per-run analyses", "", report)


def ecological_validity(request: AnalysisRequest) -> AnalysisSection | None:
    """Questionnaire vs behaviour across models (``ecological.validity_section``)."""
    return validity_section(request.run_dirs)


def method_divergence(request: AnalysisRequest) -> AnalysisSection | None:
    """One model's constructs measured by several methods (``divergence_section``)."""
    return divergence_section(request.run_dirs)


def population(request: AnalysisRequest) -> AnalysisSection | None:
    """The population section of population runs (``population.runs.population_section``)."""
    return population_section(
        request.run_dirs,
        request.session.instruments(),
        request.population,
        request.population_ready,
    )
