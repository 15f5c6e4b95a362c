"""Task kinds: how each kind of task is administered and scored (see ``base``).

Built in: ``questionnaire`` (options, keys, scales; the pipeline hooks), ``free_text`` (a
generation scored from its text), ``judged`` (generations coded by chained judge stages) and
``probe`` (items derived from another instrument). Plugins add kinds with the
``register_task_kinds`` hook and tasks by subclassing a kind's task class.
"""

from __future__ import annotations

from psymetrics_core.administer.judge import JudgeStage
from psymetrics_core.administer.kinds.base import CellRun, TaskKind, instrument_record
from psymetrics_core.administer.kinds.free_text import FreeTextKind, FreeTextTask
from psymetrics_core.administer.kinds.judged import JudgedKind, JudgedTask, share_score
from psymetrics_core.administer.kinds.probe import ProbeKind, ProbeTask
from psymetrics_core.administer.kinds.questionnaire import QuestionnaireKind
from psymetrics_core.administer.kinds.task import Task, TaskResults, TaskScores
from psymetrics_core.base.types import Generation, Score, Verdict

__all__ = [
    "CellRun",
    "TaskKind",
    "Task",
    "TaskResults",
    "TaskScores",
    "FreeTextTask",
    "FreeTextKind",
    "JudgedTask",
    "JudgedKind",
    "JudgeStage",
    "ProbeTask",
    "ProbeKind",
    "QuestionnaireKind",
    "Generation",
    "Verdict",
    "Score",
    "share_score",
    "instrument_record",
]
