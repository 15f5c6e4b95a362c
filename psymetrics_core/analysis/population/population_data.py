"""``PopulationData``: one task's answers in a population run, as ``runs.read_population_runs``
reads them and the population analyses (structure, MTMM, ...) take them.

Its own module so the analyses do not import the orchestrator (``runs``) that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

__all__ = ["PopulationData"]


@dataclass
class PopulationData:
    """One task's answers in a population run: respondents x items, personas, labels."""

    task: str
    values: pd.DataFrame  # index: respondent key (cell|repeat), columns: item ids, NaN = none
    persona: pd.Series  # respondent key -> respondent (persona) id
    labels: pd.DataFrame  # respondent key -> label fields
    n_lines: int = 0
    n_parsed: int = 0
    forms: set[str] = field(default_factory=set)
    cells: pd.DataFrame | None = None  # respondent key -> run, condition (cell less respondent)
