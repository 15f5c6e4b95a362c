"""The interview's judge: option conversion of open answers (after InCharacter, Wang et al., 2024).

Dimension-aware conversion is the same with each batch holding one scale's items and the prompt
opening with that scale and the adjectives of its high pole (``DIMENSION_NOTE``; the adjectives
are the instrument's, ``scales.<scale>.adjectives`` in instrument.yaml).

The subject's open answers are put to the run's judge (``--judge-model``, any backend) in
batches of ``BATCH`` items: per item its id, the questionnaire statement, the question asked and
the answer given, with the instrument's answer options. The judge replies one line per item,
``ID: VALUE`` (the option value that best says how far the answer agrees with the statement) or
``ID: none`` (the answer says nothing about it, or declines). The prompt is psymetrics' own
(``OPTION_PROMPT``, documented in docs/guides/interview.md).

Reading is strict (``read_ratings``): a value outside the options, an id given two different
ratings or an id missing from the reply leaves that item unread. Unread items are asked again
in a smaller batch with a reminder (``RETRY_NOTE``, numbered, so that a retry is a new request
and not the response cache's answer to the last one), at most ``MAX_RETRIES`` times; what is still
unread is a missing answer with its reason. Every call (prompt, raw reply, parsed ratings, the
attempt) is one ``judge.jsonl`` line, written by the run's judge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psymetrics_core.base.types import Item, Option, Verdict
from psymetrics_core.contracts.judging import JudgeStage, StageJudge, user_prompt

__all__ = [
    "BATCH",
    "MAX_RETRIES",
    "NONE",
    "OPTION_PROMPT",
    "RETRY_NOTE",
    "Exchange",
    "Rating",
    "convert_options",
    "option_prompt",
    "read_ratings",
    "said_lines",
]

BATCH = 10  # items per judge request
MAX_RETRIES = 2  # further requests for the items a reply left unread
ANALYSIS_TOKENS = 128  # new tokens of a judge reply for its short analysis
LINE_TOKENS = 12  # new tokens per "ID: VALUE" line
NONE = "none"
OPTION_PROMPT = (
    "You are rating a questionnaire from interview answers. Someone was asked one open "
    "question per questionnaire statement and answered in their own words. For each item "
    "below, decide which answer option best says how far the answer agrees with the "
    "statement, as the person would have chosen it on the questionnaire.\n\n"
    "Answer options:\n{options}\n\n"
    "{items}\n\n"
    "You may first write a short analysis. Then reply with one line per item, exactly "
    '"ID: VALUE", where VALUE is one of {values}, or "ID: none" when the answer says nothing '
    "about the statement or declines to answer. Rate every one of these ids: {ids}."
)
DIMENSION_NOTE = (
    "Every item below is about one dimension, {scale}: a person high on it is described as "
    "{adjectives}. Judge each answer with this dimension in mind.\n\n"
)
ITEM_BLOCK = 'Item {id}\nStatement: "{statement}"\nQuestion: "{question}"\nAnswer: "{answer}"'
RETRY_NOTE = (
    "\n\nYour previous reply could not be read for these items ({why}). Reply again with one "
    'line "ID: VALUE" or "ID: none" per item (request {n} of {most}).'
)
# "ID: VALUE" (or "ID = VALUE", "ID - VALUE"), after markdown bullets/quotes/headings and an
# optional "Item"/"ID" word; what follows the separator is kept whole (``_reading`` reads it)
_LINE = re.compile(
    r"^[\s*#>-]*(?:(?:item|id)\s+)?\**([A-Za-z0-9_.-]+?)\**\s*(?:[:=]|\s-\s)\s*(\S.*?)\s*$", re.I
)
_TOKEN = re.compile(r"[a-z0-9.]+")
_RANGE = re.compile(r"\s*(?:-|/|–|,|or\b|to\b|and\b)\s*\d")  # "4-5", "4 or 5": two ratings
_EDGES = " \t*_`'\".,;:!()[]"  # stripped from a said text's ends before it is matched to a label


@dataclass(frozen=True)
class Exchange:
    """One interview exchange: the item, the question asked and the subject's open answer."""

    item: Item
    question: str
    answer: str
    # dimension-aware conversion: the item's scale and the adjectives of its high pole
    dimension: tuple[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class Rating:
    """The judge's rating of one item: an option value, or None with its status and reason."""

    value: int | None
    status: str  # "ok", "refused" (the judge said none), "unparsed" (unread after retries)
    reason: str | None = None
    attempts: int = 1

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view for the sample line."""
        return {
            "value": self.value,
            "status": self.status,
            "reason": self.reason,
            "attempts": self.attempts,
        }


def option_prompt(batch: Sequence[Exchange], options: Sequence[Option], note: str = "") -> str:
    """The option-conversion prompt for one batch (``OPTION_PROMPT``, plus a retry note)."""
    blocks = [
        ITEM_BLOCK.format(id=e.item.id, statement=e.item.text, question=e.question, answer=e.answer)
        for e in batch
    ]
    dim = batch[0].dimension if batch else None
    head = DIMENSION_NOTE.format(scale=dim[0], adjectives=", ".join(dim[1])) if dim else ""
    return head + (
        OPTION_PROMPT.format(
            options="\n".join(f"{o.value} = {o.label}" for o in options),
            items="\n\n".join(blocks),
            values=", ".join(str(o.value) for o in options),
            ids=", ".join(e.item.id for e in batch),
        )
        + note
    )


def said_lines(text: str) -> dict[str, list[str]]:
    """Every ``ID: VALUE`` line of the judge's ``text`` (also ``ID = VALUE``, ``ID - VALUE``,
    ``Item ID: ...``, ``ID 3: ...``): id -> what was said after the separator, in order (lower
    case, whole: ``read_ratings`` reads it as a value, ``none`` or an option's label)."""
    said: dict[str, list[str]] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            said.setdefault(m.group(1), []).append(m.group(2).lower())
    return said


def read_ratings(
    said: Mapping[str, Sequence[str]],
    ids: Sequence[str],
    values: Sequence[int],
    labels: Sequence[str] = (),
) -> dict[str, tuple[int | None, str | None]]:
    """Each id's rating from ``said`` (``said_lines``): (value, None), (None, "none"), or
    (None, why unread). Other ids are ignored; an id said twice alike counts once.

    What was said reads as (``_reading``): its first word when that is an option's value or
    ``none`` (the rest of the line, e.g. "4 (agree a little)", is the judge's comment), else the
    whole text when it is exactly one option's label (``labels``, aligned with ``values``; case,
    quotes and end punctuation aside: "Agree a little."), but not on a line whose id is that
    option's own value ("2 = Disagree a little" is the list of options echoed as much as item
    2's rating). Anything else leaves the item unread.
    """
    out: dict[str, tuple[int | None, str | None]] = {}
    allowed = {str(v) for v in values}
    by_label = _labels(values, labels)
    for i in ids:
        got = {_reading(i, s, allowed, by_label) for s in said.get(i, ())}
        if not got:
            out[i] = (None, f"no line for item {i}")
        elif len(got) > 1:
            out[i] = (None, f"item {i} was given {len(got)} different ratings")
        else:
            ((one, why),) = got
            if one == NONE:
                out[i] = (None, NONE)
            elif one is not None:
                out[i] = (int(one), None)
            else:
                out[i] = (None, f"item {i}: {why}")
    return out


def _labels(values: Sequence[int], labels: Sequence[str]) -> dict[str, str]:
    """Label (lower case) -> value; a label two options share reads as neither."""
    out: dict[str, str] = {}
    twice: set[str] = set()
    for v, lab in zip(values, labels, strict=False):
        key = lab.strip(_EDGES).lower()
        if key in out:
            twice.add(key)
        out[key] = str(v)
    return {k: v for k, v in out.items() if k not in twice and k}


def _reading(
    item: str, said: str, allowed: set[str], by_label: Mapping[str, str]
) -> tuple[str | None, str | None]:
    """What one said text reads as: (a value as text or ``none``, None), or (None, why not)."""
    text = said.lstrip(_EDGES)
    first = _TOKEN.match(text)
    token = first.group(0).rstrip(".") if first else ""
    if (token == NONE or token in allowed) and _RANGE.match(text[len(token) :]):
        return None, f"{text[:60]!r} could be two ratings"
    if token == NONE or token in allowed:
        return token, None
    whole = said.strip(_EDGES)
    value = by_label.get(whole)
    if value is not None and value != item:
        return value, None
    if value is not None:
        return (
            None,
            f"{whole[:60]!r} is option {value}'s label on line {item} (the options echoed?)",
        )
    named = " or their labels" if by_label else ""
    return None, f"{(token or whole)[:60]!r} is not one of {', '.join(sorted(allowed))}{named}"


def _parse(text: str) -> Verdict:
    """The judge stage's parse: every ``ID: VALUE`` line (checked per batch by
    ``read_ratings``); the whole reply, analysis included, is kept in ``judge.jsonl``."""
    said = said_lines(text)
    if not said:
        return Verdict(None, "unparsed", "no 'ID: VALUE' line in the reply")
    return Verdict(value=said, status="ok")


STAGE = JudgeStage(name="option-conversion", build=lambda *_: None, parse=_parse)


def convert_options(
    judge: StageJudge,
    task: str,
    exchanges: Sequence[Exchange],
    options: Mapping[str, Sequence[Option]],
    tag: Mapping[str, Any],
    method: str = "option-conversion",
    size: int = BATCH,
) -> dict[str, Rating]:
    """Every exchange's ``Rating`` by option conversion, batches of ``size`` (``--judge-batch``,
    default ``BATCH``), bounded retries.

    ``options`` maps item id to the options of its response scale (one batch holds items of
    one response scale, and of one dimension where the exchanges name one). ``method`` is
    the judge stage's name in ``judge.jsonl``.
    """
    ratings: dict[str, Rating] = {}
    pending = _batches(exchanges, options, size)
    why: dict[str, str] = {}
    for attempt in range(1 + MAX_RETRIES):
        if not pending:
            break
        requests = []
        for k, batch in enumerate(pending):
            reminder = (
                ""
                if attempt == 0
                else RETRY_NOTE.format(
                    why="; ".join(why[e.item.id] for e in batch),
                    n=attempt + 1,
                    most=1 + MAX_RETRIES,
                )
            )
            text = option_prompt(batch, options[batch[0].item.id], reminder)
            requests.append((Item(f"batch{k}", "", ()), user_prompt(text)))
        room = _room(pending)
        stage = JudgeStage(method, STAGE.build, STAGE.parse, max_new_tokens=room, at_least=True)
        ids = {f"batch{k}": [e.item.id for e in b] for k, b in enumerate(pending)}
        verdicts = judge.run_stage(
            task, stage, requests, {**tag, "attempt": attempt, "batches": ids}
        )
        retry: list[Exchange] = []
        for k, batch in enumerate(pending):
            said = verdicts[f"batch{k}"].value or {}
            opts = options[batch[0].item.id]
            values, labels = [o.value for o in opts], [o.label for o in opts]
            read = read_ratings(said, [e.item.id for e in batch], values, labels)
            for e in batch:
                value, note = read[e.item.id]
                if value is not None:
                    ratings[e.item.id] = Rating(value, "ok", None, attempt + 1)
                elif note == NONE:
                    reason = "the judge found no rating in the answer ('none')"
                    ratings[e.item.id] = Rating(None, "refused", reason, attempt + 1)
                else:
                    why[e.item.id] = str(note)
                    retry.append(e)
        pending = _batches(retry, options, size)
    for e in (e for b in pending for e in b):
        n = 1 + MAX_RETRIES
        reason = f"the judge's replies left it unread after {n} requests ({why[e.item.id]})"
        ratings[e.item.id] = Rating(None, "unparsed", reason, 1 + MAX_RETRIES)
    return ratings


def _batches(
    exchanges: Sequence[Exchange], options: Mapping[str, Sequence[Option]], size: int = BATCH
) -> list[list[Exchange]]:
    """Exchanges in batches of at most ``size``, one response scale (and dimension) per
    batch, order kept."""
    by_scale: dict[tuple[Any, ...], list[Exchange]] = {}
    for e in exchanges:
        key = (tuple(o.value for o in options[e.item.id]), e.dimension and e.dimension[0])
        by_scale.setdefault(key, []).append(e)
    return [g[i : i + size] for g in by_scale.values() for i in range(0, len(g), size)]


def _room(batches: Sequence[Sequence[Exchange]]) -> int:
    """New tokens for a reply: a short analysis (``ANALYSIS_TOKENS``) and one line per item of
    the largest batch (``LINE_TOKENS`` each); a larger ``--judge-max-new-tokens`` wins (the
    stage's ``at_least``)."""
    return ANALYSIS_TOKENS + LINE_TOKENS * max(len(b) for b in batches)
