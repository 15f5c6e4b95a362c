"""Option scoring: the interview's judge in ``logprob`` mode (``--condition interview-logprob``).

Option conversion (``interview_judge``) needs a judge that writes readable ``ID: VALUE`` lines;
a small local model does not (SmolLM2-135M judging itself echoed the list of answer options).
Here nothing is parsed: per item, the judge gets one prompt (``SCORE_PROMPT``: the statement,
the question, the answer and the options, asking for the option's value alone) and its backend
scores each reply it could give as the continuation of that prompt: every option's value
(``"1"`` ... ``"5"``) and ``"none"``. The judge's rating is the most likely reply: an option's
value, or "none" (the answer says nothing about the statement or declines: a missing answer
with its reason, as in option conversion). Two replies exactly as likely are a tie, left
unread with the reason (never broken by order); so is a reply the backend could not score.

The scored replies are continuations (``Option.continuation``), so the judge must be a backend
that scores them (``supports_continuations``: the default model, ``hf``, ``openai-completions``,
lm-eval models); another is refused in one line before the subject is asked anything. Every
item is one ``judge.jsonl`` line: the prompt, the options scored and the verdict, whose value
holds each reply's log-probability and the one chosen. One request per item, no retries (a
scored reply is never unreadable).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from psymetrics_core.administer.administration.interview import Interview
from psymetrics_core.administer.administration.interview_judge import (
    ITEM_BLOCK,
    NONE,
    Exchange,
    Rating,
)
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.types import Answer, Item, Option, Prompt, Verdict
from psymetrics_core.contracts.judging import JudgeStage, StageJudge, user_prompt
from psymetrics_core.contracts.kinds import CellRun

__all__ = [
    "INTERVIEW_LOGPROB",
    "METHOD",
    "SCORE_PROMPT",
    "InterviewLogprob",
    "convert_by_scores",
    "read_scores",
    "score_prompt",
]

INTERVIEW_LOGPROB = "interview-logprob"
METHOD = "option-logprob"
SCORE_PROMPT = (
    "You are rating a questionnaire from an interview answer. Someone was asked an open "
    "question about a questionnaire statement and answered in their own words. Decide which "
    "answer option best says how far the answer agrees with the statement, as the person "
    "would have chosen it on the questionnaire.\n\n"
    "Answer options:\n{options}\n\n"
    "{item}\n\n"
    'Reply with the value of the option only ({values}), or "none" when the answer says '
    "nothing about the statement or declines to answer."
)


def score_prompt(e: Exchange, options: Sequence[Option]) -> Prompt:
    """The judge's prompt for one exchange, its options the replies to score: each option's
    value as text, then ``none``."""
    item = ITEM_BLOCK.format(
        id=e.item.id, statement=e.item.text, question=e.question, answer=e.answer
    )
    text = SCORE_PROMPT.format(
        options="\n".join(f"{o.value} = {o.label}" for o in options),
        item=item,
        values=", ".join(str(o.value) for o in options),
    )
    scored = [Option(o.value, o.label, continuation=str(o.value)) for o in options]
    none_code = max(o.value for o in options) + 1  # a code no option has; read by position
    scored.append(Option(none_code, NONE, continuation=NONE))
    return replace(user_prompt(text), options=tuple(scored))


def read_scores(prompt: Prompt, logprobs: Sequence[float]) -> Verdict:
    """The most likely reply among the ``prompt``'s options (``score_prompt``'s: the values,
    then none) given their ``logprobs``: ``{"rating": VALUE or "none", "logprobs": {reply:
    lp}}``; a tie or a reply without a finite log-probability is unread with the reason."""
    replies = [o.continuation or str(o.value) for o in prompt.options]
    if len(logprobs) != len(replies):
        why = f"the judge scored {len(logprobs)} of the {len(replies)} replies"
        return Verdict(None, "unparsed", why)
    bad = [r for r, lp in zip(replies, logprobs, strict=True) if not math.isfinite(lp)]
    if bad:
        return Verdict(None, "unparsed", f"no finite log-probability for {', '.join(bad)}")
    table = {r: round(float(lp), 6) for r, lp in zip(replies, logprobs, strict=True)}
    best = max(logprobs)
    top = [r for r, lp in zip(replies, logprobs, strict=True) if lp == best]
    if len(top) > 1:
        return Verdict(None, "unparsed", f"a tie between {' and '.join(top)}")
    return Verdict({"rating": top[0], "logprobs": table}, "ok")


def convert_by_scores(
    judge: StageJudge,
    task: str,
    exchanges: Sequence[Exchange],
    options: Mapping[str, Sequence[Option]],
    tag: Mapping[str, Any],
    method: str = METHOD,
) -> dict[str, Rating]:
    """Every exchange's ``Rating`` by option scoring: one scored request per item."""
    if not exchanges:
        return {}
    prompts = {e.item.id: score_prompt(e, options[e.item.id]) for e in exchanges}
    stage = JudgeStage(method, lambda *_: None, _no_text, score=read_scores)
    judge.check_stage(stage, list(prompts.values()))
    requests = [(Item(i, "", ()), p) for i, p in prompts.items()]
    verdicts = judge.run_stage(task, stage, requests, {**tag, "attempt": 0})
    return {i: _rating(v) for i, v in verdicts.items()}


def _no_text(text: str) -> Verdict:
    """A scored stage reads no text (``JudgeStage.score`` gives its verdicts)."""
    return Verdict(None, "unparsed", "a scored stage reads no text")


def _rating(read: Verdict) -> Rating:
    if not read.ok:
        return Rating(None, "unparsed", f"the judge's scores left it unread ({read.reason})")
    rating = read.value["rating"]
    if rating == NONE:
        return Rating(None, "refused", "the judge's most likely reply was 'none'")
    return Rating(int(rating), "ok")


class InterviewLogprob(Interview):
    """``interview`` with option scoring: the judge's backend scores each option's value and
    "none" as the reply to one item's prompt; the most likely is the rating (module docstring)."""

    name = INTERVIEW_LOGPROB
    method = METHOD
    batched = False  # one item per judge request

    def convert(
        self,
        judge: StageJudge,
        task: str,
        exchanges: Sequence[Exchange],
        options: Mapping[str, Sequence[Option]],
        tag: Mapping[str, Any],
    ) -> dict[str, Rating]:
        """Every exchange's rating by option scoring (``convert_by_scores``)."""
        return convert_by_scores(judge, task, exchanges, options, tag, self.method)

    def requests(
        self, run: CellRun, items: list[Item]
    ) -> list[tuple[Prompt, GenerationSettings]] | None:
        """The subject's requests, once the judge is known to score the replies."""
        _check_judge(run, items, self.method)
        return super().requests(run, items)

    def administer(self, run: CellRun, items: list[Item]) -> list[tuple[Item, Answer]]:
        """Refuse a judge that cannot score the replies before the subject is asked."""
        _check_judge(run, items, self.method)
        return super().administer(run, items)


def _check_judge(run: CellRun, items: Sequence[Item], method: str) -> None:
    """One line, before anything is sent, when the run's judge cannot score the replies (a
    backend without ``supports_continuations``)."""
    if items:
        it = items[0]
        opts = run.task.response_scales[it.response_scale].options
        stage = JudgeStage(method, lambda *_: None, _no_text, score=read_scores)
        run.judge.check_stage(stage, [score_prompt(Exchange(it, str(it.question), ""), opts)])
