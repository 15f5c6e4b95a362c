"""The ``item-by-item`` administration mode (the default): one prompt per item.

Each item is rendered by the ``render_prompt`` hook, the prompts go to the model in chunks of
its ``chunk_size`` and each completion is parsed by the ``parse_response`` hook (with the
session's parsers) and written as one ``samples.jsonl`` line as its chunk returns.
"""

from __future__ import annotations

from psymetrics_core.administer.kinds.base import in_chunks
from psymetrics_core.administer.kinds.questionnaire import questionnaire_sample
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.types import Answer, Item, Prompt
from psymetrics_core.contracts.administration import Administration
from psymetrics_core.contracts.conditions import ITEM_BY_ITEM
from psymetrics_core.contracts.kinds import CellRun

__all__ = ["ItemByItem"]


class ItemByItem(Administration):
    """Ask every item on its own; parse each completion and write its sample."""

    name = ITEM_BY_ITEM

    def requests(
        self, run: CellRun, items: list[Item]
    ) -> list[tuple[Prompt, GenerationSettings]] | None:
        """One request per item, in the cell's item order."""
        return [(pr, run.settings) for pr in _prompts(run, items)]

    def administer(self, run: CellRun, items: list[Item]) -> list[tuple[Item, Answer]]:
        """Ask, parse and record every item."""
        hook, inst = run.session.hook, run.task
        parsers = run.session.parsers()
        answers: list[tuple[Item, Answer]] = []
        for it, pr, comp in in_chunks(run, items, _prompts(run, items)):
            ans: Answer = hook.parse_response(
                instrument=inst, item=it, prompt=pr, completion=comp, parsers=parsers
            )
            answers.append((it, ans))
            run.writer.write(
                questionnaire_sample(
                    inst, run.form, it, pr, comp.text, comp.option_logprobs, ans, run.tag
                )
            )
        return answers


def _prompts(run: CellRun, items: list[Item]) -> list[Prompt]:
    hook = run.session.hook
    return [hook.render_prompt(instrument=run.task, item=it, condition=run.cell) for it in items]
