"""The ``questionnaire`` kind: Likert items with options, keys and scales.

Runs through the firstresult pipeline hooks exactly as before kinds existed: ``load_items`` ->
``render_prompt`` -> model -> ``parse_response`` -> ``score`` -> ``aggregate`` (the core's
defaults run last, so a plugin can still replace any stage for its instrument). A battery cell
(``--condition battery``) is given all items at once instead (``battery.py``).
"""

from __future__ import annotations

from typing import Any

from psymetrics_core.administer.kinds.base import CellRun, TaskKind, in_chunks
from psymetrics_core.administer.kinds.battery import administer_battery
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.types import Answer, Instrument, Item, Prompt
from psymetrics_core.instruments.scoring import centred_scales, keyed_values, mrat_term

__all__ = ["QuestionnaireKind", "questionnaire_sample"]


class QuestionnaireKind(TaskKind):
    """Administers an instrument spec item by item (or as a battery) and scores its scales."""

    name = "questionnaire"

    def count(self, task: Instrument, form: str, limit: int | None, session: Any) -> int:
        """Items of ``form`` (the default form when ``form`` is unknown), cut to ``limit``."""
        n = len(task.forms.get(form, task.items))
        return min(n, limit) if limit else n

    def requests(self, run: CellRun) -> list[tuple[Prompt, GenerationSettings]] | None:
        """The item prompts of the cell (None for a battery cell: it is given chunk by chunk)."""
        if run.cell.battery:
            return None
        return [(pr, run.settings) for pr in _prompts(run, _items(run))]

    def run_cell(self, run: CellRun) -> dict[str, Any]:
        """Administer, parse, score and aggregate one cell."""
        hook = run.session.hook
        inst, form = run.task, run.form
        items = _items(run)
        if run.cell.battery:
            answers = _battery(run, items)
        else:
            answers = _item_by_item(run, items)
        responses = {it.id: a.value for it, a in answers}
        scores = hook.score(
            instrument=inst, responses=responses, form=form, answers={it.id: a for it, a in answers}
        )
        entry: dict[str, Any] = hook.aggregate(
            instrument=inst, scores=scores, answers=answers, norm_group=run.norm_group
        )
        return run.finish(entry)


def _items(run: CellRun) -> list[Item]:
    """The cell's items: loaded by the hook, cut to ``limit``, then the cell's item transform."""
    items: list[Item] = run.session.hook.load_items(instrument=run.task, form=run.form)
    if run.limit is not None:
        items = items[: run.limit]
    return run.cell.apply_items(run.task, items, run.cell.seed)


def _prompts(run: CellRun, items: list[Item]) -> list[Prompt]:
    hook = run.session.hook
    return [hook.render_prompt(instrument=run.task, item=it, condition=run.cell) for it in items]


def _item_by_item(run: CellRun, items: list[Item]) -> list[tuple[Item, Answer]]:
    """Ask every item on its own; parse each completion and write its sample."""
    hook, inst = run.session.hook, run.task
    answers: list[tuple[Item, Answer]] = []
    for it, pr, comp in in_chunks(run, items, _prompts(run, items)):
        ans: Answer = hook.parse_response(
            instrument=inst, item=it, prompt=pr, completion=comp, session=run.session
        )
        answers.append((it, ans))
        run.writer.write(
            questionnaire_sample(
                inst, run.form, it, pr, comp.text, comp.option_logprobs, ans, run.tag
            )
        )
    return answers


def _battery(run: CellRun, items: list[Item]) -> list[tuple[Item, Answer]]:
    """Give the items as a battery (``battery.py``) and write one sample per item."""
    answers: list[tuple[Item, Answer]] = []
    for it, ans, pr, text, extra in administer_battery(run, items):
        answers.append((it, ans))
        run.writer.write(
            questionnaire_sample(run.task, run.form, it, pr, text, None, ans, {**run.tag, **extra})
        )
    return answers


def questionnaire_sample(
    inst: Instrument,
    form: str,
    it: Item,
    pr: Prompt,
    text: str | None,
    logprobs: tuple[float, ...] | None,
    ans: Answer,
    tag: dict[str, Any],
) -> dict[str, Any]:
    """One samples.jsonl line: the item, prompt, completion, answer, its keyed values (as
    scored: ``spec_scoring.keyed_values``, before MRAT centring) and the condition tag."""
    rs = inst.response_scales[it.response_scale]
    scales = _scales_of(inst, form, it)
    return {
        "task": inst.id,
        "form": form,
        "item": it.id,
        "prompt": pr.to_json(),
        "rendered_prompt": pr.text,
        "completion": text,
        "option_logprobs": (
            dict(zip([o.value for o in pr.options], logprobs, strict=True))
            if logprobs is not None
            else None
        ),
        "answer": ans.value,
        "parse_status": ans.status,
        "option_probs": ans.probabilities,
        **({"data": ans.data} if ans.data is not None else {}),
        "keyed": keyed_values(inst, form, it, ans.value),
        "mrat_term": mrat_term(inst, it, ans.value),
        **tag,
        "item_meta": {
            "scales": scales,
            "reverse": it.reverse,
            "scored": it.scored,
            "min": rs.min,
            "max": rs.max,
            "rescale": [list(p) for p in it.rescale] if it.rescale else None,
            "centred": [s for s in centred_scales(inst) if it.scored and s in scales],
        },
    }


def _scales_of(inst: Instrument, form: str, it: Item) -> list[str]:
    """Every scale whose score uses ``it`` (totals and unions of scales included)."""
    if form not in inst.forms:
        return list(it.scales)
    return [name for name in inst.scales if inst.counts_towards(it, name)] or list(it.scales)
