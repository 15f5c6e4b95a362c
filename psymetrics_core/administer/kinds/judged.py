"""The ``judged`` kind: each generation is coded by one or more chained judge stages.

After the evaluated model's generations of a cell are in, each ``JudgeStage`` of the task is
run as ONE batch through the run's judge (``Judge.run_stage``: response cache, ``judge.jsonl``);
stage 2 sees stage 1's verdicts, and so on. A generation that did not parse is not judged.
The task's ``score`` reads the verdicts from ``TaskResults``; a score that rests on no parsed
verdict must be None with a reason (``share_score`` does this for shares).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from psymetrics_core.administer.kinds.base import CellRun
from psymetrics_core.administer.kinds.free_text import FreeTextKind, FreeTextTask
from psymetrics_core.administer.kinds.task import Task
from psymetrics_core.base.types import Generation, Score, Verdict
from psymetrics_core.contracts.judging import JudgeStage, StageJudge

__all__ = ["JudgedTask", "JudgedKind", "JudgeStage", "run_stages", "share_score"]


class JudgedTask(FreeTextTask):
    """A free-text task whose generations a judge model codes.

    Set ``stages`` (a class attribute): the judge stages in order, each seeing the verdicts of
    those before it.
    """

    kind_name = "judged"
    stages: ClassVar[Sequence[JudgeStage]] = ()


class JudgedKind(FreeTextKind):
    """Runs ``JudgedTask``s: generation, then the judge stages, then scoring."""

    name = "judged"

    def after_generation(
        self, run: CellRun, task: Task, generations: list[Generation]
    ) -> dict[str, dict[str, Verdict]]:
        """Run every stage as one batch over the cell's parsed generations."""
        if not isinstance(task, JudgedTask):
            return {}
        return run_stages(task, generations, run.judge, run.tag)


def run_stages(
    task: JudgedTask, generations: Sequence[Generation], judge: StageJudge, tag: Mapping[str, Any]
) -> dict[str, dict[str, Verdict]]:
    """``task``'s stages in order, each as ONE batch over the parsed generations; the verdicts
    per stage and item id (stage n sees the verdicts of stages 1..n-1)."""
    verdicts: dict[str, dict[str, Verdict]] = {}
    for stage in task.stages:
        requests = []
        for gen in generations:
            if not gen.ok:
                continue
            previous = {s: v[gen.item.id] for s, v in verdicts.items() if gen.item.id in v}
            prompt = stage.prompt(gen.item, gen, previous)
            if prompt is not None:
                requests.append((gen.item, prompt))
        verdicts[stage.name] = judge.run_stage(task.id, stage, requests, tag)
    return verdicts


def share_score(name: str, hits: Iterable[bool | None], kind: str = "share") -> Score:
    """The share of True among ``hits``; None entries (no parsed verdict) are left out and
    counted in ``detail``. With no parsed verdict at all the score is None with a reason."""
    values = list(hits)
    parsed = [h for h in values if h is not None]
    n_missing = len(values) - len(parsed)
    detail = {"n_units": len(values), "n_verdicts": len(parsed), "n_unparsed": n_missing}
    if not parsed:
        reason = (
            f"0 of {len(values)} verdicts parsed" if values else "no units of this kind were given"
        )
        return Score(name, None, reason, kind, 0, detail=detail)
    return Score(name, sum(parsed) / len(parsed), None, kind, len(parsed), detail=detail)
