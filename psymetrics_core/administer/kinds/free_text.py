"""The ``free_text`` kind: a generation per item, scored from its text (refletter, housing).

For one cell: the task's items (``load_items``) -> the cell's form, limit and item transforms
-> ``render`` -> the evaluated model in chunks (each sample written as its chunk returns) ->
``parse`` (pure) -> ``after_generation`` (the judged kind runs its judge stages here) ->
``score`` -> the results entry.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from psymetrics_core.administer.kinds.base import CellRun, TaskKind, in_chunks
from psymetrics_core.administer.kinds.task import Task, TaskResults, task_entry
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Generation, Instrument, Item, Prompt, Verdict
from psymetrics_core.contracts.conditions import ITEM_BY_ITEM
from psymetrics_core.contracts.kinds import SessionView

__all__ = ["FreeTextTask", "FreeTextKind", "task_sample"]


class FreeTextTask(Task):
    """A task whose score is computed from the generated texts (kind ``free_text``)."""

    kind_name = "free_text"


def _as_task(inst: Instrument) -> Task:
    if not isinstance(inst, Task):
        raise PsymError(
            f"task '{inst.id}' has kind '{inst.kind}' but is not a administer.kinds.Task"
        )
    return inst


class FreeTextKind(TaskKind):
    """Runs ``FreeTextTask``s (and is the base of the judged and probe kinds)."""

    name = "free_text"

    def items(self, task: Task, form: str, limit: int | None) -> list[Item]:
        """The task's items, cut to ``limit``."""
        items = task.load_items()
        return items[:limit] if limit is not None else items

    def count(self, task: Instrument, form: str, limit: int | None, session: SessionView) -> int:
        """Prompts per cell: the task's items (its data files are read to count them)."""
        return len(self.items(_as_task(task), form, limit))

    def settings(self, task: Task, settings: GenerationSettings) -> GenerationSettings:
        """The generation settings for ``task`` (the probe kind may switch the mode)."""
        return settings

    def generate(self, run: CellRun) -> list[Generation]:
        """Administer the cell's items; one sample line per item as its chunk returns."""
        task = _as_task(run.task)
        if run.cell.administration != ITEM_BY_ITEM:  # the modes put questionnaire items
            mode = run.cell.administration
            raise PsymError(f"the '{mode}' condition applies to questionnaires, not '{task.id}'")
        items = run.cell.apply_items(task, self.items(task, run.form, run.limit), run.cell.seed)
        prompts: list[Prompt] = [task.render(it, run.cell) for it in items]
        settings = self.settings(task, run.settings)
        out: list[Generation] = []
        for item, prompt, comp in in_chunks(run, items, prompts, settings):
            gen = task.parse(item, comp)
            if comp.option_logprobs is not None and gen.option_logprobs is None:
                gen = replace(gen, option_logprobs=comp.option_logprobs)
            out.append(gen)
            run.writer.write(task_sample(task, run, prompt, comp.text, gen))
        return out

    def after_generation(
        self, run: CellRun, task: Task, generations: list[Generation]
    ) -> dict[str, dict[str, Verdict]]:
        """Verdicts per stage and item id (the free-text kind has no stages)."""
        return {}

    def run_cell(self, run: CellRun) -> dict[str, Any]:
        """Generate, (judge), score; the task's results entry for this cell."""
        task = _as_task(run.task)
        generations = self.generate(run)
        results = TaskResults(generations, self.after_generation(run, task, generations))
        entry = task_entry(task, results, task.score(results))
        entry["settings"] = self.settings(task, run.settings).to_json()
        return run.finish(entry)


def task_sample(
    task: Task, run: CellRun, prompt: Prompt, completion: str | None, gen: Generation
) -> dict[str, Any]:
    """One ``samples.jsonl`` line of a non-questionnaire task."""
    lps = gen.option_logprobs
    return {
        "task": task.id,
        "kind": task.kind,
        "form": run.form,
        "item": gen.item.id,
        "prompt": prompt.to_json(),
        "rendered_prompt": prompt.text,
        "completion": completion,
        "text": gen.text,
        "option_logprobs": (
            dict(zip([o.label for o in prompt.options], lps, strict=True))
            if lps is not None and len(lps) == len(prompt.options)
            else None
        ),
        "answer": None,
        "parse_status": gen.status,
        "option_probs": None,
        "data": gen.data,
        **run.tag,
        "item_meta": {"scales": [], "scored": True, "meta": gen.item.meta},
    }
