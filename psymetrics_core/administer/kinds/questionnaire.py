"""The ``questionnaire`` kind: Likert items with options, keys and scales.

Runs through the firstresult pipeline hooks exactly as before kinds existed: ``load_items`` ->
``render_prompt`` -> model -> ``parse_response`` -> ``score`` -> ``aggregate`` (the core's
defaults run last, so a plugin can still replace any stage for its instrument). How the items
are put to the model is the cell's administration mode (``administer/administration/``: item by
item by default, all at once under ``--condition battery``), looked up on the session by name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from psymetrics_core.administer.kinds.base import CellRun, TaskKind
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.types import Answer, Instrument, Item, Option, Prompt
from psymetrics_core.contracts.administration import Administration
from psymetrics_core.contracts.kinds import SessionView
from psymetrics_core.instruments.scoring import centred_scales, keyed_values, mrat_term

__all__ = ["QuestionnaireKind", "cell_entry", "questionnaire_sample", "option_mass"]


class QuestionnaireKind(TaskKind):
    """Administers an instrument spec in the cell's administration mode and scores its scales."""

    name = "questionnaire"

    def count(self, task: Instrument, form: str, limit: int | None, session: SessionView) -> int:
        """Items of ``form`` (the default form when ``form`` is unknown), cut to ``limit``."""
        n = len(task.forms.get(form, task.items))
        return min(n, limit) if limit else n

    def requests(self, run: CellRun) -> list[tuple[Prompt, GenerationSettings]] | None:
        """The cell's prompts as its administration mode lists them (None: not known ahead)."""
        mode = run.session.administration(run.cell.administration)
        return mode.requests(run, _items(run))

    def run_cell(self, run: CellRun) -> dict[str, Any]:
        """Administer, parse, score and aggregate one cell."""
        mode = run.session.administration(run.cell.administration)
        answers = mode.administer(run, _items(run))
        return run.finish(
            cell_entry(run.session, mode, run.task, run.form, answers, run.norm_group)
        )


def cell_entry(
    session: SessionView,
    mode: Administration,
    inst: Instrument,
    form: str,
    answers: list[tuple[Item, Answer]],
    norm_group: str | None,
) -> dict[str, Any]:
    """One cell's task entry from its answers: the ``score`` hook's scale scores (those the
    mode rates itself replacing them: ``rate_scales``, with the reason of a None), the
    ``aggregate`` hook, then the mode's ``annotate`` (also ``psym judge``)."""
    hook = session.hook
    responses = {it.id: a.value for it, a in answers}
    scores = hook.score(
        instrument=inst, responses=responses, form=form, answers={it.id: a for it, a in answers}
    )
    rated = mode.rate_scales(inst, form, answers)
    scores = {**scores, **{name: r.score for name, r in rated.items()}}
    entry: dict[str, Any] = hook.aggregate(
        instrument=inst, scores=scores, answers=answers, norm_group=norm_group
    )
    for name, r in rated.items():
        if r.reason is not None and name in entry.get("scales", {}):
            entry["scales"][name]["reason"] = r.reason
    return mode.annotate(entry)


def _items(run: CellRun) -> list[Item]:
    """The cell's items: loaded by the hook, cut to ``limit``, then the cell's item transform."""
    items: list[Item] = run.session.hook.load_items(instrument=run.task, form=run.form)
    if run.limit is not None:
        items = items[: run.limit]
    return run.cell.apply_items(run.task, items, run.cell.seed)


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
    mass: dict[str, Any] = {}
    if logprobs is not None:
        value, why = option_mass(pr.options, logprobs)
        mass = {"option_mass": value}
        if why is not None:
            ans = replace(ans, data={**(ans.data or {}), "option_mass_reason": why})
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
        **mass,
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


def option_mass(
    options: Sequence[Option], logprobs: Sequence[float]
) -> tuple[float | None, str | None]:
    """The probability the model gave the options together, before ``option_probs``
    renormalises it (sum of exp(log-likelihood)), and None's reason.

    Undefined when one option's scored text is a prefix of another's (``1`` and ``10``): the
    longer continuation's probability is part of the shorter's, so their sum is not a share.
    """
    texts = [o.scored_text for o in options]
    for a in texts:
        for b in texts:
            if a != b and b.startswith(a):
                return None, (
                    f"option '{a}' is a prefix of option '{b}': their probabilities overlap and "
                    "do not add up to the options' share"
                )
    total = math.fsum(math.exp(lp) for lp in logprobs)
    if total > 1.0 + 1e-6:
        return None, f"the options' probabilities sum to {total:.6g}, more than 1"
    return min(1.0, total), None  # float rounding only


def _scales_of(inst: Instrument, form: str, it: Item) -> list[str]:
    """Every scale whose score uses ``it`` (totals and unions of scales included)."""
    if form not in inst.forms:
        return list(it.scales)
    return [name for name in inst.scales if inst.counts_towards(it, name)] or list(it.scales)
