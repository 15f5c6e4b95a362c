"""The ``interview`` administration: each item asked as an open question, a judge rating the
answers (InCharacter, Wang et al., 2024).

Per item the subject gets the item's ``question`` (the items.csv column, e.g. "Are you
talkative?") as the only user message of its own conversation (no history: one item per
conversation, as InCharacter); personas, framings and population respondents apply as usual
(``Cell.apply_messages``). An instrument whose items lack questions is refused before anything
is sent, naming the missing column. The open answers are then rated by the run's judge
(``--judge-model``, any backend) by option conversion (``interview_judge``): one option per
item, or "none". The ratings are the items' answers, scored by the instrument's own keys and
rule (reverse keys applied once, by the scoring, never by the judge).

A "none" or an unread rating is a missing answer with its reason (``data.reason``), never the
midpoint; ``--impute midpoint`` (``CellRun.impute``, for every interview mode) reproduces
InCharacter's choice of imputing the scale's midpoint, marked ``data.imputed`` on every such
sample. The ``interview-dimensions`` mode is dimension-aware option conversion: one scale per
judge batch, the prompt naming the scale and its high pole's adjectives
(``scales.<scale>.adjectives`` in instrument.yaml); the ``interview-logprob`` mode
(``interview_logprob``) has the judge's backend score each option as its reply instead of
parsing a text (a small local judge); the ``interview-expert`` modes rate whole scales
(``interview_expert``). ``--judge-batch`` sets the items per option-conversion request
(``judge.batch``). Every sample keeps the question, the statement, the open answer and the
judge's rating (``interview``); every judge call is in ``judge.jsonl``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from psymetrics_core.administer.administration.interview_judge import (
    BATCH,
    Exchange,
    Rating,
    convert_options,
)
from psymetrics_core.administer.kinds.base import in_chunks
from psymetrics_core.administer.kinds.questionnaire import questionnaire_sample
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Instrument, Item, Option, Prompt
from psymetrics_core.contracts.administration import Administration
from psymetrics_core.contracts.judging import StageJudge
from psymetrics_core.contracts.kinds import CellRun

__all__ = [
    "ANSWER_TOKENS",
    "IMPUTE",
    "INTERVIEW",
    "INTERVIEW_DIMENSIONS",
    "InterviewDimensions",
    "METHOD",
    "Asked",
    "Interview",
    "check_impute",
    "check_judge_batch",
    "check_questions",
    "interview_answer",
    "rate_and_record",
]

INTERVIEW = "interview"
IMPUTE = ("midpoint",)  # --impute: how a judge's "none" is scored (None: left missing)
INTERVIEW_DIMENSIONS = "interview-dimensions"
ANSWER_TOKENS = 160  # new tokens for an open answer at least (a few sentences)
METHOD = "option-conversion"


def check_questions(inst: Instrument, items: list[Item]) -> None:
    """A one-line error when an item has no question text (the ``question`` column)."""
    missing = [it.id for it in items if not it.question]
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        where = (
            "its items.csv has no 'question' column text"
            if inst.texts_shipped
            else f"the item file (--items {inst.id}=FILE) has no 'question' column text"
        )
        raise PsymError(
            f"task '{inst.id}' cannot be interviewed: {where} for item(s) {shown} (the item "
            "as an open question, e.g. 'Are you talkative?')"
        )


def interview_prompt(run: CellRun, item: Item) -> Prompt:
    """The item's open question as the one user message (after the cell's messages)."""
    text = str(item.question)
    messages = run.cell.apply_messages([{"role": "user", "content": text}])
    return Prompt(messages=tuple(messages), options=(), text=text)


def _settings(run: CellRun) -> GenerationSettings:
    settings = run.settings
    if settings.mode != "generate":
        raise PsymError(
            "the 'interview' condition needs --mode generate (the model answers in its own words)"
        )
    return replace(settings, max_new_tokens=max(settings.max_new_tokens, ANSWER_TOKENS))


@dataclass(frozen=True)
class Asked:
    """One item as asked: the item, the subject's prompt and its open answer."""

    item: Item
    prompt: Prompt
    answer: str


def rate_and_record(
    judge: StageJudge,
    inst: Instrument,
    form: str,
    asked: Sequence[Asked],
    tag: dict[str, Any],
    write: Callable[[dict[str, Any]], None],
    mode: Interview,
    impute: str | None = None,
) -> list[tuple[Item, Answer]]:
    """Have ``judge`` rate every open answer (``mode``'s method), write each item's sample
    (question, open answer, rating) and return the answers to score (also ``psym judge``)."""
    cell = {k: v for k, v in tag.items() if k != "max_new_tokens"}
    rated = mode.rate(judge, inst, form, asked, cell, impute)
    answers: list[tuple[Item, Answer]] = []
    for a, (ans, rating) in zip(asked, rated, strict=True):
        answers.append((a.item, ans))
        sample = questionnaire_sample(inst, form, a.item, a.prompt, a.answer, None, ans, tag)
        sample["interview"] = {
            "question": a.prompt.text,
            "statement": a.item.text,
            "method": mode.method,
            "impute": impute,
            "rating": rating.to_json(),
        }
        write(sample)
    return answers


def check_impute(impute: str | None, modes: Sequence[Administration]) -> None:
    """One-line errors: ``--impute`` names a known choice and the run has an interview."""
    if impute is None:
        return
    if impute not in IMPUTE:
        raise PsymError(f"--impute must be one of none, {', '.join(IMPUTE)}, got {impute!r}")
    if not any(isinstance(m, Interview) for m in modes):
        raise PsymError(
            f"--impute {impute} scores an interview judge's 'none'; the run has no interview "
            "condition (--condition interview, interview-dimensions, interview-expert, ...)"
        )


def check_judge_batch(batch: int | None, modes: Sequence[Administration], what: str) -> None:
    """One line when ``--judge-batch`` has nothing to set: none of ``modes`` (``what``: the
    run's conditions, or the mode ``psym judge`` judges by) converts options in batches."""
    if batch is None or any(isinstance(m, Interview) and m.batched for m in modes):
        return
    raise PsymError(
        f"--judge-batch {batch} sets the items per option-conversion request of an interview "
        f"judge (--condition interview or interview-dimensions); {what} has none "
        "(interview-logprob scores one item per request, interview-expert rates scales in "
        "batches of 3-4)"
    )


def interview_answer(inst: Instrument, item: Item, rating: Rating, impute: str | None) -> Answer:
    """The item's answer: the judge's option, else missing with its reason (or imputed)."""
    if rating.value is not None:
        return Answer(rating.value, "ok")
    data: dict[str, Any] = {"reason": rating.reason}
    if impute == "midpoint":
        rs = inst.response_scales[item.response_scale]
        mid = (rs.min + rs.max) / 2
        if mid == int(mid):
            return Answer(int(mid), "ok", data={**data, "imputed": "midpoint"})
        data["imputed_reason"] = f"the scale {rs.min}-{rs.max} has no middle option"
    return Answer(None, rating.status, data=data)


class Interview(Administration):
    """Ask each item's question in its own conversation; the judge converts answers to options."""

    name = INTERVIEW
    method = METHOD
    batched = True  # the judge converts options in batches of --judge-batch items

    def dimension(self, inst: Instrument, item: Item) -> tuple[str, tuple[str, ...]] | None:
        """The dimension a batch is judged on (None: plain option conversion)."""
        return None

    def convert(
        self,
        judge: StageJudge,
        task: str,
        exchanges: Sequence[Exchange],
        options: Mapping[str, Sequence[Option]],
        tag: Mapping[str, Any],
    ) -> dict[str, Rating]:
        """The judge's rating of every exchange: option conversion, ``judge.batch`` items per
        request (``--judge-batch``; default ``BATCH``)."""
        batch = judge.batch or BATCH
        return convert_options(judge, task, exchanges, options, tag, self.method, batch)

    def check(self, inst: Instrument, items: list[Item]) -> None:
        """One-line errors before anything is sent: every item needs its question."""
        check_questions(inst, items)

    def requests(
        self, run: CellRun, items: list[Item]
    ) -> list[tuple[Prompt, GenerationSettings]] | None:
        """One request per item (the subject's; the judge's follow from the answers)."""
        self.check(run.task, items)
        settings = _settings(run)
        return [(interview_prompt(run, it), settings) for it in items]

    def administer(self, run: CellRun, items: list[Item]) -> list[tuple[Item, Answer]]:
        """Ask every question, have the judge rate the answers, record and return them."""
        self.check(run.task, items)
        settings = _settings(run)
        prompts = [interview_prompt(run, it) for it in items]
        asked = [
            Asked(it, pr, comp.text or "")
            for it, pr, comp in in_chunks(run, items, prompts, settings)
        ]
        tag = {**run.tag, "max_new_tokens": settings.max_new_tokens}
        write = run.writer.write
        return rate_and_record(run.judge, run.task, run.form, asked, tag, write, self, run.impute)

    def rate(
        self,
        judge: StageJudge,
        inst: Instrument,
        form: str,
        asked: Sequence[Asked],
        tag: dict[str, Any],
        impute: str | None,
    ) -> list[tuple[Answer, Rating]]:
        """Each asked item's answer and the judge's rating of it, in order: the mode's
        conversion (``convert``), a "none" missing unless imputed."""
        exchanges = [
            Exchange(a.item, a.prompt.text, a.answer, self.dimension(inst, a.item)) for a in asked
        ]
        options = {a.item.id: inst.response_scales[a.item.response_scale].options for a in asked}
        ratings = self.convert(judge, inst.id, exchanges, options, tag)
        out = []
        for a in asked:
            rating = ratings[a.item.id]
            out.append((interview_answer(inst, a.item, rating, impute), rating))
        return out

    def annotate(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Record the interview's judge method with the task entry (the imputation is the
        run's: ``impute`` in results.json)."""
        entry["interview"] = {"method": self.method}
        return entry


class InterviewDimensions(Interview):
    """``interview`` with dimension-aware option conversion: one scale per judge batch, the
    prompt naming the scale and its high pole's adjectives (``scales.<s>.adjectives``)."""

    name = INTERVIEW_DIMENSIONS
    method = "dimension-aware"

    def dimension(self, inst: Instrument, item: Item) -> tuple[str, tuple[str, ...]] | None:
        """The item's first scale and its adjectives."""
        scale = item.scales[0]
        return scale, inst.scales[scale].adjectives

    def check(self, inst: Instrument, items: list[Item]) -> None:
        """Questions, and adjectives for every scale an item is judged on."""
        check_questions(inst, items)
        bare = sorted({it.scales[0] for it in items if it.scales} - _with_adjectives(inst))
        if bare:
            raise PsymError(
                f"task '{inst.id}' cannot be interviewed dimension-aware: its instrument.yaml "
                f"gives no 'adjectives' for scale(s) {', '.join(bare)}"
            )
        unscaled = [it.id for it in items if not it.scales]
        if unscaled:
            raise PsymError(
                f"task '{inst.id}': item(s) {', '.join(unscaled)} belong to no scale, so they "
                "have no dimension to be judged on (use --condition interview)"
            )


def _with_adjectives(inst: Instrument) -> set[str]:
    return {name for name, sdef in inst.scales.items() if sdef.adjectives}
