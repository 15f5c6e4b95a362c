"""Score existing answers with a task's own scoring (``psym score``, ``psym.score_responses``).

Questionnaires are scored from a long-format CSV (human data or earlier model answers) by
their key alone; free-text and judged tasks from their generations (``generations``). The
files are read by ``answer_files`` (the one reader of existing answers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psymetrics_core.administer.answer_files import read_responses
from psymetrics_core.administer.generations import score_generations
from psymetrics_core.administer.kinds.task import Task
from psymetrics_core.administer.options import with_options
from psymetrics_core.administer.runner import resolve_tasks
from psymetrics_core.base.types import Answer
from psymetrics_core.pluginsys.session import Session

__all__ = ["ScaleResult", "ScoredAnswers", "score_answers", "score_responses"]


def score_responses(
    task: str, path: str | Path, session: Session, form: str = "original"
) -> dict[str, dict[str, Any]]:
    """Scale scores per respondent: {respondent: {scale: {score, n_items, n_answered}}}, with
    ``task`` and the scoring hooks of ``session``."""
    inst = session.get_instrument(task)
    hook = session.hook
    out: dict[str, dict[str, Any]] = {}
    for who, answers in read_responses(path, inst, form).items():
        given = {k: Answer(v, "ok") for k, v in answers.items()}
        scores = hook.score(instrument=inst, responses=answers, form=form, answers=given)
        out[who] = {
            name: {"score": s.score, "n_items": s.n_items, "n_answered": s.n_answered}
            for name, s in scores.items()
        }
    return out


@dataclass(frozen=True)
class ScaleResult:
    """One respondent's score on one scale; the item counts where the task has them."""

    score: Any
    n_items: int | None = None
    n_answered: int | None = None

    @property
    def incomplete(self) -> bool:
        """Computed from fewer items than the scale has (not comparable with norms)."""
        if self.n_items is None or self.n_answered is None:
            return False
        return self.n_answered < self.n_items


@dataclass(frozen=True)
class ScoredAnswers:
    """The scores of every respondent in a file: {respondent: {scale: ScaleResult}}."""

    task: str
    respondents: dict[str, dict[str, ScaleResult]]

    def to_json(self) -> dict[str, Any]:
        """``{"<task>": {"<respondent>": {"<scale>": score}}}`` (``psym score --json``)."""
        return {
            self.task: {
                who: {s: r.score for s, r in scales.items()}
                for who, scales in self.respondents.items()
            }
        }


def score_answers(
    task: str,
    path: str | Path,
    *,
    session: Session,
    form: str = "original",
    options: Mapping[str, Mapping[str, Any]] | None = None,
    judge_model: str | None = None,
    judge_model_args: str | dict[str, str] | None = None,
    judge_max_new_tokens: int | None = None,
) -> ScoredAnswers:
    """Score the answers in ``path`` with ``task``'s scoring, per respondent.

    A questionnaire's file is its long-format CSV, scored from the key alone (no item texts
    needed); a task's is its generations (CSV, JSONL or a run's samples.jsonl), judged with
    ``judge_model`` where the task is judged. ``options`` are the task options.
    """
    opts = options or {}
    scored: dict[str, dict[str, Any]]
    inst = session.get_instrument(task)
    if isinstance(inst, Task):
        inst = resolve_tasks([task], session, form, None, opts)[0]
        assert isinstance(inst, Task)
        entries = score_generations(
            inst,
            path,
            session=session,
            judge_model=judge_model,
            judge_model_args=judge_model_args,
            judge_max_new_tokens=judge_max_new_tokens,
        )
        scored = {who: entry["scales"] for who, entry in entries.items()}
    else:  # a questionnaire is scored from its key alone: no item texts needed
        with_options(inst, opts.get(task), opts.get("*"))
        scored = score_responses(task, path, session, form)
    return ScoredAnswers(
        task,
        {
            who: {
                s: ScaleResult(r.get("score"), r.get("n_items"), r.get("n_answered"))
                for s, r in scales.items()
            }
            for who, scales in scored.items()
        },
    )
