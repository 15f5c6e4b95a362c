"""The report's sections as plain data for the template (figures already rendered to SVG).

Tables come from ``table_sections``, figures from ``figure_sections``; this module assembles
them into the template's context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.read import PANEL_FILES, RunData
from psymetrics_core.report.divergence_sections import divergence_context
from psymetrics_core.report.figure_sections import (
    distribution_figures,
    forest_figures,
    profile_figures,
)
from psymetrics_core.report.population_sections import population_context
from psymetrics_core.report.score_sections import (
    eval_table,
    indicator_rows,
    score_columns,
    score_notes,
)
from psymetrics_core.report.table_sections import (
    MAX_SAMPLES,
    analysis_tables,
    behaviour_rows,
    panel_blocks,
    provenance_rows,
    sample_rows,
)

__all__ = ["build_context", "MAX_SAMPLES"]

RESPONDENTS = (
    "Respondents here are administrations of one model (condition cells × seeded repeats), not "
    "people: α and ω say how the items of a scale co-vary across those administrations, and the "
    "ICC how stable item answers are across repeats. With fewer than 3 administrations they are "
    "undefined (shown as —, with the reason)."
)
# what fills each panel section: the command, then what to do with its output
PANEL_HINTS = {
    "contamination.json": (
        "psym contamination --tasks TASK -o RUN",
        " (it writes RUN/contamination.json) and give RUN to psym report",
    ),
    "projective.json": (
        "psym projective-analyze RUN --json RUN/projective.json",
        " on a run of a projective task",
    ),
}
RESPONDENTS_POPULATION = (
    "In the sections before 'Population psychometrics' each respondent is one cell (an "
    "administration of one model under that persona); the population section treats the "
    "respondents as people: their spread against the human norms, reliability and structure."
)


def build_context(
    runs: Sequence[RunData],
    session: Session,
    population: PopulationOptions | None = None,
) -> dict[str, Any]:
    """Everything the template renders (``session``: the installed instruments, which the
    population section needs; ``population``: its options, as in ``psym analyze``)."""
    # first: a bad population option fails before the other sections are computed
    pop = population_context(runs, session, population)
    samples, left_out = sample_rows(runs)
    return {
        "runs": [
            {
                "label": r.label,
                "model": r.results.get("model"),
                "mode": r.mode,
                "tasks": ", ".join(r.tasks),
                "path": r.path.name,
            }
            for r in runs
        ],
        "labels": [r.label for r in runs],
        "score_columns": score_columns(runs),
        "eval_table": eval_table(runs, session),
        "score_notes": score_notes(runs),
        "indicators": indicator_rows(runs),
        "profile": profile_figures(runs),
        "analysis": analysis_tables(runs, session),
        "respondents": RESPONDENTS_POPULATION if pop["tasks"] else RESPONDENTS,
        "population": pop,
        "distributions": distribution_figures(runs),
        "forest": forest_figures(runs),
        "behaviour": behaviour_rows(runs),
        "divergence": divergence_context(runs),
        "panels": panel_blocks(runs),
        "panel_titles": PANEL_FILES,
        "panel_hints": PANEL_HINTS,
        "samples": samples,
        "samples_left_out": left_out,
        "provenance": provenance_rows(runs),
    }
