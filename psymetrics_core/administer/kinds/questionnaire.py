"""The ``questionnaire`` kind: Likert items with options, keys and scales.

Runs through the firstresult pipeline hooks exactly as before kinds existed: ``load_items`` ->
``render_prompt`` -> model -> ``parse_response`` -> ``score`` -> ``aggregate`` (the core's
defaults run last, so a plugin can still replace any stage for its instrument).
"""

from __future__ import annotations

from typing import Any

from psymetrics_core.administer.kinds.base import CellRun, TaskKind, in_chunks
from psymetrics_core.base.types import Answer, Instrument, Item, Prompt
from psymetrics_core.instruments.scoring import centred_scales, keyed_values, mrat_term

__all__ = ["QuestionnaireKind", "questionnaire_sample"]


class QuestionnaireKind(TaskKind):
    """Administers an instrument spec item by item (or as a battery) and scores its scales."""

    name = "questionnaire"
    prompts_known_ahead = True  # battery cells excepted (scheduler.py checks the cell)

    def count(self, task: Instrument, form: str, limit: int | None, session: Any) -> int:
        """Items of ``form`` (the default form when ``form`` is unknown), cut to ``limit``."""
        n = len(task.forms.get(form, task.items))
        return min(n, limit) if limit else n

    def run_cell(self, run: CellRun) -> dict[str, Any]:
        """Administer, parse, score and aggregate one cell."""
        hook = run.session.hook
        inst, cell = run.task, run.cell
        form = run.form
        items: list[Item] = hook.load_items(instrument=inst, form=form)
        if run.limit is not None:
            items = items[: run.limit]
        items = cell.apply_items(inst, items, cell.seed)
        answers: list[tuple[Item, Answer]] = []
        if cell.battery:
            from psymetrics_core.administer.conditions.battery import administer_battery

            given = administer_battery(inst, items, run.backend, run.settings, cell, run.reporter)
            for it, b_ans, pr, text, extra in given:
                answers.append((it, b_ans))
                run.writer.write(
                    questionnaire_sample(
                        inst, form, it, pr, text, None, b_ans, {**run.tag, **extra}
                    )
                )
            items = []
        prompts: list[Prompt] = [
            hook.render_prompt(instrument=inst, item=it, condition=cell) for it in items
        ]
        for it, pr, comp in in_chunks(run, items, prompts):
            ans: Answer = hook.parse_response(
                instrument=inst, item=it, prompt=pr, completion=comp, session=run.session
            )
            answers.append((it, ans))
            run.writer.write(
                questionnaire_sample(
                    inst, form, it, pr, comp.text, comp.option_logprobs, ans, run.tag
                )
            )
        responses = {it.id: a.value for it, a in answers}
        scores = hook.score(
            instrument=inst, responses=responses, form=form, answers={it.id: a for it, a in answers}
        )
        entry: dict[str, Any] = hook.aggregate(
            instrument=inst, scores=scores, answers=answers, norm_group=run.norm_group
        )
        return run.finish(entry)


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
