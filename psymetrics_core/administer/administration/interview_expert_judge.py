"""The interview's expert rating: a judge scores one scale from its question–answer pairs
(after InCharacter's expert assessment, Wang et al., 2024).

The judge is given one scale (its name, what a high score means, the adjectives of its high
pole where the instrument has them) and a batch of that scale's interview exchanges: the
question asked and the answer given, each reverse-keyed item marked as being about the
scale's opposite pole. It writes its analysis, then one line ``SCORE: X``, X a number on the
items' response range (decimals allowed), or ``SCORE: none`` when the answers say nothing
about the scale. The judge rates the person's standing on the scale, not agreement with the
questions, so the instrument's reverse keys are not applied again to its score. The prompt is
psymetrics' own (``EXPERT_PROMPT``, documented in docs/guides/interview.md).

Reading is strict (``read_score``): no ``SCORE:`` line, two different scores or a number
outside the range leaves the batch unread; an unread batch is asked again with a numbered
reminder (``RETRY_NOTE``), at most ``MAX_RETRIES`` times, each request a ``judge.jsonl`` line
(prompt, raw reply, the scores read and the analysis).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psymetrics_core.administer.administration.interview_judge import MAX_RETRIES, NONE
from psymetrics_core.base.types import Item, Verdict
from psymetrics_core.contracts.judging import JudgeStage, StageJudge, user_prompt

__all__ = [
    "EXPERT_PROMPT",
    "BatchRating",
    "Construct",
    "Pair",
    "expert_batches",
    "expert_prompt",
    "rate_scales_by_expert",
    "read_score",
    "said_scores",
]

ANALYSIS_TOKENS = 256  # new tokens of an expert reply for its analysis
PAIR_TOKENS = 32  # and per question–answer pair it discusses
EXPERT_PROMPT = (
    "You are a psychologist scoring one person on one scale of the {instrument} "
    "questionnaire from an interview. The scale is {scale}{about}. The person was asked the "
    "questions below, one at a time, and answered in their own words.\n\n"
    "{pairs}\n\n"
    "Questions marked (opposite pole) are about the opposite of {scale}: an answer that "
    "agrees with such a question speaks for a LOW standing on {scale}.\n\n"
    "Judge the person's standing on {scale} itself, not how far they agree with each "
    "question, on a scale from {lo} (very low on {scale}) to {hi} (very high on {scale}), "
    "{mid} being the middle. First write your analysis of what the answers show. Then end "
    'with one line, exactly "SCORE: X", where X is a number from {lo} to {hi} (decimals '
    'allowed), or "SCORE: none" when the answers say nothing about {scale} or decline to '
    "answer."
)
PAIR_BLOCK = '{n}. Question: "{question}"{pole}\n   Answer: "{answer}"'
RETRY_NOTE = (
    "\n\nYour previous reply could not be read ({why}). End your reply with one line "
    '"SCORE: X" or "SCORE: none" (request {n} of {most}).'
)
_SCORE = re.compile(r"^[\s*#>_-]*score[\s*_]*[:=][\s*_]*(\S+)", re.I)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Pair:
    """One interview exchange of a scale: the item, the question asked, the open answer."""

    item: Item
    question: str
    answer: str


@dataclass(frozen=True)
class Construct:
    """A scale as the expert judge is told of it, and the range it rates on."""

    instrument: str  # the instrument's name
    scale: str
    about: str  # ": <description>; a person high on it is described as ..." (may be empty)
    lo: int
    hi: int


@dataclass(frozen=True)
class BatchRating:
    """The expert's score of one batch of a scale's pairs, or None with its status and reason."""

    scale: str
    batch: int
    items: tuple[str, ...]
    score: float | None
    status: str  # "ok", "refused" (the judge said none), "unparsed" (unread after retries)
    reason: str | None = None
    attempts: int = 1
    imputed: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view for the samples' ``data.expert``."""
        return {
            "scale": self.scale,
            "batch": self.batch,
            "items": list(self.items),
            "score": self.score,
            "status": self.status,
            "reason": self.reason,
            "attempts": self.attempts,
            **({"imputed": self.imputed} if self.imputed else {}),
        }


def expert_batches(pairs: Sequence[Pair], all_at_once: bool) -> list[list[Pair]]:
    """A scale's pairs in batches of 3–4, order kept (fewer than 6 pairs: one batch, as they
    cannot be split so); ``all_at_once``: one batch of them all."""
    n = len(pairs)
    if all_at_once or n < 6:
        return [list(pairs)] if pairs else []
    k = -(-n // 4)  # ceil(n / 4) batches: every batch then holds 3 or 4 pairs (n >= 6)
    sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
    out, start = [], 0
    for size in sizes:
        out.append(list(pairs[start : start + size]))
        start += size
    return out


def expert_prompt(c: Construct, batch: Sequence[Pair], note: str = "") -> str:
    """The expert-rating prompt for one batch of one scale (``EXPERT_PROMPT``)."""
    blocks = [
        PAIR_BLOCK.format(
            n=i + 1,
            question=p.question,
            pole=" (opposite pole)" if p.item.reverse else "",
            answer=p.answer,
        )
        for i, p in enumerate(batch)
    ]
    mid = (c.lo + c.hi) / 2
    return (
        EXPERT_PROMPT.format(
            instrument=c.instrument,
            scale=c.scale,
            about=c.about,
            pairs="\n".join(blocks),
            lo=c.lo,
            hi=c.hi,
            mid=int(mid) if mid == int(mid) else mid,
        )
        + note
    )


def said_scores(text: str) -> list[str]:
    """Every ``SCORE: X`` line of the judge's ``text``: what was said, in order (lower case)."""
    out = []
    for line in text.splitlines():
        m = _SCORE.match(line)
        if m:
            out.append(m.group(1).strip("*_.,;!").lower())
    return out


def read_score(said: Sequence[str], lo: int, hi: int) -> tuple[float | None, str | None]:
    """The batch's score from ``said`` (``said_scores``): (score, None), (None, "none"), or
    (None, why unread)."""
    got = set(said)
    if not got:
        return None, "no 'SCORE: X' line"
    if len(got) > 1:
        return None, f"{len(got)} different scores ({', '.join(sorted(got))})"
    (one,) = got
    if one == NONE:
        return None, NONE
    if not _NUMBER.fullmatch(one):
        return None, f"{one!r} is not a number"
    value = float(one)
    if not lo <= value <= hi:
        return None, f"{one} is outside {lo}-{hi}"
    return value, None


def _parse(text: str) -> Verdict:
    """The stage's parse: the ``SCORE:`` lines (checked per batch by ``read_score``) and the
    analysis (the reply without them); the whole reply is kept in ``judge.jsonl`` too."""
    said = said_scores(text)
    analysis = "\n".join(ln for ln in text.splitlines() if not _SCORE.match(ln)).strip()
    if not said:
        return Verdict(None, "unparsed", "no 'SCORE: X' line in the reply", analysis or None)
    return Verdict(value=said, status="ok", explanation=analysis or None)


@dataclass
class _Batch:
    construct: Construct
    index: int
    pairs: list[Pair]

    @property
    def name(self) -> str:
        return f"{self.construct.scale}/{self.index}"


def rate_scales_by_expert(
    judge: StageJudge,
    task: str,
    scales: Sequence[tuple[Construct, Sequence[Pair]]],
    tag: Mapping[str, Any],
    method: str,
    all_at_once: bool,
) -> list[BatchRating]:
    """Every batch's ``BatchRating``: each scale's pairs in batches (``expert_batches``), one
    judge round for all of them, unread batches asked again at most ``MAX_RETRIES`` times."""
    pending = [
        _Batch(c, k, b)
        for c, pairs in scales
        for k, b in enumerate(expert_batches(pairs, all_at_once))
    ]
    out: list[BatchRating] = []
    why: dict[str, str] = {}
    for attempt in range(1 + MAX_RETRIES):
        if not pending:
            break
        requests = []
        for b in pending:
            note = (
                ""
                if attempt == 0
                else RETRY_NOTE.format(why=why[b.name], n=attempt + 1, most=1 + MAX_RETRIES)
            )
            text = expert_prompt(b.construct, b.pairs, note)
            requests.append((Item(b.name, "", ()), user_prompt(text)))
        room = ANALYSIS_TOKENS + PAIR_TOKENS * max(len(b.pairs) for b in pending)
        stage = JudgeStage(method, lambda *_: None, _parse, max_new_tokens=room, at_least=True)
        ids = {b.name: [p.item.id for p in b.pairs] for b in pending}
        verdicts = judge.run_stage(
            task, stage, requests, {**tag, "attempt": attempt, "batches": ids}
        )
        retry = []
        for b in pending:
            said = verdicts[b.name].value or []
            score, unread = read_score(said, b.construct.lo, b.construct.hi)
            items = tuple(p.item.id for p in b.pairs)
            if score is not None:
                out.append(
                    BatchRating(b.construct.scale, b.index, items, score, "ok", None, attempt + 1)
                )
            elif unread == NONE:
                reason = (
                    f"the judge found nothing about {b.construct.scale} in the answers ('none')"
                )
                out.append(
                    BatchRating(
                        b.construct.scale, b.index, items, None, "refused", reason, attempt + 1
                    )
                )
            else:
                why[b.name] = str(unread)
                retry.append(b)
        pending = retry
    for b in pending:
        n = 1 + MAX_RETRIES
        reason = f"the judge's replies left it unread after {n} requests ({why[b.name]})"
        items = tuple(p.item.id for p in b.pairs)
        out.append(BatchRating(b.construct.scale, b.index, items, None, "unparsed", reason, n))
    return out
