"""Score generations that already exist (``psym score --task refletter --responses FILE``).

The file is a CSV or JSONL with ``item`` (an item id, see ``psym show TASK --json``), ``text``
(the generation) and optional ``respondent`` (one score set per respondent). A ``samples.jsonl``
of an earlier ``psym eval`` is accepted as is: its ``completion`` is re-parsed exactly as in
the run, rows of other tasks are skipped, and each (condition, repeat) is one respondent
(``original/repeat0`` for a plain run), so it re-scores to the run's own results. Judged tasks
call the judge (``judge_model``) through the response cache, one batch per stage. The file is
read by ``answer_files`` (the one reader of existing answers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psymetrics_core.administer.answer_files import read_generations
from psymetrics_core.administer.judge import DEFAULT_JUDGE_MAX_NEW_TOKENS, Judge
from psymetrics_core.administer.kinds.judged import JudgedTask, run_stages
from psymetrics_core.administer.kinds.task import Task, TaskResults, task_entry
from psymetrics_core.backends.base import parse_model_args
from psymetrics_core.backends.cache import CachedBackend, ResponseCache
from psymetrics_core.base.errors import ResponsesError
from psymetrics_core.base.types import Completion, Verdict
from psymetrics_core.pluginsys.session import Session

__all__ = ["score_generations"]


def score_generations(
    task: Task,
    path: str | Path,
    *,
    session: Session,
    judge_model: str | None = None,
    judge_model_args: str | dict[str, str] | None = None,
    judge_max_new_tokens: int | None = None,
    seed: int = 1234,
) -> dict[str, dict[str, Any]]:
    """Each respondent's results entry (scores, counts, detail), as ``psym eval`` reports it."""
    data = read_generations(path, task)
    judge = _judge(task, session, judge_model, judge_model_args, judge_max_new_tokens, seed)
    out: dict[str, dict[str, Any]] = {}
    try:
        for who, rows in data.items():
            gens = [task.parse(item, Completion(text=text)) for item, text in rows]
            verdicts: dict[str, dict[str, Verdict]] = {}
            if judge is not None and isinstance(task, JudgedTask):
                verdicts = run_stages(task, gens, judge, {"respondent": who})
            results = TaskResults(gens, verdicts)
            out[who] = task_entry(task, results, task.score(results))
    finally:
        if judge is not None:
            judge.close()
    return out


def _judge(
    task: Task,
    session: Session,
    model: str | None,
    model_args: str | dict[str, str] | None,
    max_new_tokens: int | None,
    seed: int,
) -> Judge | None:
    if not isinstance(task, JudgedTask):
        return None
    if not model:
        raise ResponsesError(f"task '{task.id}' is judged: name the judge with --judge-model")

    args = model_args if isinstance(model_args, dict) else parse_model_args(model_args)
    return Judge(
        model=model,
        model_args=args,
        factory=lambda: CachedBackend(session.make_backend(model, args), ResponseCache()),
        seed=seed,
        max_new_tokens=max_new_tokens or DEFAULT_JUDGE_MAX_NEW_TOKENS,
    )
