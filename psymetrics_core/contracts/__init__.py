"""The types that cross the plugin boundary: conditions and cells, task kinds and the cell run
they are handed, judge stages, administration modes and ``psym analyze`` sections.

They sit below ``pluginsys`` (import-linter's layers in pyproject.toml), so the hook
specifications and the ``Session`` take and return them typed.

May import: base, instruments, records, backends.
"""

from __future__ import annotations

from psymetrics_core.contracts.administration import Administration, RatedScale
from psymetrics_core.contracts.analyses import Analysis, AnalysisSection
from psymetrics_core.contracts.conditions import ITEM_BY_ITEM, Cell, Condition, item_rng
from psymetrics_core.contracts.judging import JudgeStage, StageJudge, user_prompt
from psymetrics_core.contracts.kinds import (
    CellRun,
    Parser,
    SessionView,
    TaskKind,
    instrument_record,
)

__all__ = [
    "Administration",
    "Analysis",
    "AnalysisSection",
    "Cell",
    "CellRun",
    "Condition",
    "ITEM_BY_ITEM",
    "JudgeStage",
    "Parser",
    "RatedScale",
    "SessionView",
    "StageJudge",
    "TaskKind",
    "instrument_record",
    "item_rng",
    "user_prompt",
]
