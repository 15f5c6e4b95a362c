"""The ``verbalized`` administration: the model states what share of people choose each option.

Meister et al. (2024) get a group's answer distribution out of a model three ways: sample its
answers, read its probabilities over the options, or ask it to *express the distribution*. This
mode is the third: per item, the model is shown the question as the instrument puts it (the
``render_prompt`` hook, so templates, option order and text conditions apply) and asked, in
psymetrics' own words (``ASK``), what percentage of people would choose each option. Personas,
framings and population respondents apply as usual (``Cell.apply_messages``); with a persona
the question asks about "people like you". The instrument's own system prompt (which tells a
respondent how to answer for themselves) is not sent.

The reply is parsed strictly (``stated_shares.parse_stated_shares``): every option named once, by
label or value, the percentages summing to 90-110% (renormalised within that, the stated total
recorded); anything else is that item's parse failure with its reason in ``data.reason``. Each
item's sample records ``stated_shares`` (None when unparsed) and no answer: a verbalized run has
distributions, not scale scores, and its scales and answer-pattern indicators say so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from psymetrics_core.administer.administration.stated_shares import parse_stated_shares
from psymetrics_core.administer.kinds.base import in_chunks
from psymetrics_core.administer.kinds.questionnaire import questionnaire_sample
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Item, Prompt
from psymetrics_core.contracts.administration import Administration
from psymetrics_core.contracts.kinds import CellRun

__all__ = ["Verbalized", "VERBALIZED", "ASK", "NO_SCORE", "PATTERN_INDICATORS", "verbalized_prompt"]

VERBALIZED = "verbalized"
ASK = (
    "People were asked the questionnaire question below.\n\n"
    "---\n{question}\n---\n\n"
    "Do not answer it yourself. Estimate what percentage of {people} would choose each answer "
    'option. Reply with one line per option in the form "VALUE = PERCENT%", for every one of '
    "these options, the percentages adding up to 100:\n{options}"
)
TOKENS_PER_OPTION = 16  # new tokens per option ("3 = 20%" and a line break, with room to spare)
NO_SCORE = (
    "verbalized administration: the model stated each item's distribution (samples.jsonl "
    "stated_shares), it gave no answer to score"
)
PATTERN_INDICATORS = ("straight_lining", "acquiescence", "reverse_keyed_inconsistency")


def verbalized_prompt(run: CellRun, item: Item) -> Prompt:
    """The verbalized question for ``item`` in ``run``'s cell (module docstring)."""
    cell = run.cell
    shown = run.session.hook.render_prompt(instrument=run.task, item=item, condition=cell)
    people = "people like you" if {"persona", "respondent"} & set(cell.facets) else "people"
    text = ASK.format(
        question=shown.text,
        people=people,
        options="\n".join(f"{o.value} = {o.label}" for o in shown.options),
    )
    messages = cell.apply_messages([{"role": "user", "content": text}])
    return Prompt(messages=tuple(messages), options=shown.options, text=text, images=shown.images)


def _settings(run: CellRun, prompts: list[Prompt]) -> GenerationSettings:
    """The run's settings with room for one line per option (generation only)."""
    settings = run.settings
    if settings.mode != "generate":
        raise PsymError(
            "the 'verbalized' condition needs --mode generate (it reads the shares the model "
            "states in its reply)"
        )
    most = max((len(p.options) for p in prompts), default=0)
    return replace(settings, max_new_tokens=max(settings.max_new_tokens, TOKENS_PER_OPTION * most))


class Verbalized(Administration):
    """Ask, per item, what share of people choose each option; record the parsed shares."""

    name = VERBALIZED
    states_distribution = True

    def requests(
        self, run: CellRun, items: list[Item]
    ) -> list[tuple[Prompt, GenerationSettings]] | None:
        """One request per item, in the cell's item order."""
        prompts = [verbalized_prompt(run, it) for it in items]
        settings = _settings(run, prompts)
        return [(pr, settings) for pr in prompts]

    def administer(self, run: CellRun, items: list[Item]) -> list[tuple[Item, Answer]]:
        """Ask, parse strictly and record every item (its answer is None: nothing to score)."""
        prompts = [verbalized_prompt(run, it) for it in items]
        settings = _settings(run, prompts)
        tag = {**run.tag, "max_new_tokens": settings.max_new_tokens}
        answers: list[tuple[Item, Answer]] = []
        for it, pr, comp in in_chunks(run, items, prompts, settings):
            stated = parse_stated_shares(comp.text or "", pr.options)
            ans = Answer(None, stated.status, data=stated.data())
            answers.append((it, ans))
            sample = questionnaire_sample(run.task, run.form, it, pr, comp.text, None, ans, tag)
            sample["stated_shares"] = stated.shares
            run.writer.write(sample)
        return answers

    def annotate(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Scales and answer-pattern indicators without a value say why: no answers to score."""
        for scale in entry.get("scales", {}).values():
            if scale.get("score") is None:
                scale["reason"] = NO_SCORE
        indicators = entry.get("indicators") or {}
        for name in PATTERN_INDICATORS:
            if name in indicators and indicators[name].get("value") is None:
                indicators[name]["reason"] = NO_SCORE
        return entry
