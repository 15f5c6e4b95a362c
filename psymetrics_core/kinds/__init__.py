"""Task kinds: how each kind of task is administered and scored (see ``base``).

Built in: ``questionnaire`` (options, keys, scales; the pipeline hooks), ``free_text`` (a
generation scored from its text), ``judged`` (generations coded by chained judge stages) and
``probe`` (items derived from another instrument). Plugins add kinds with the
``register_task_kinds`` hook and tasks by subclassing a kind's task class.
"""

from __future__ import annotations

from ..judge import JudgeStage
from ..types import Generation, Score, Verdict
from .base import CellRun, TaskKind, instrument_record
from .free_text import FreeTextKind, FreeTextTask
from .judged import JudgedKind, JudgedTask, share_score
from .probe import ProbeKind, ProbeTask
from .questionnaire import QuestionnaireKind
from .task import Task, TaskResults, TaskScores

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
