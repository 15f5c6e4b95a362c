"""Default ``parse_response`` and the built-in named parsers.

``first_valid_int`` takes the first whole number in the completion that is a valid option value
(the rule of Jung et al.'s (2026) extractor, restricted to the item's own codes); failing that, the
option whose label appears earliest (longest label first, so "disagree" never reads as
"agree"). A completion with neither is "refused" when it reads like a refusal, else "unparsed".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Completion, Instrument, Item, Option, Prompt
from psymetrics_core.contracts.kinds import Parser
from psymetrics_core.pluginsys.hookspecs import hookimpl

__all__ = [
    "first_valid_int",
    "indexed_score",
    "parse_response",
    "register_parsers",
    "looks_like_refusal",
]

_INT = re.compile(r"(?<![\d.])\d+(?![\d.]\d)")
_REFUSAL = re.compile(
    r"\b(i can(?:no|')t|i am (?:not able|unable)|i'm (?:not able|unable)|as an ai|"
    r"i do(?: not|n't) have (?:personal|opinions|feelings|beliefs)|i won't|i will not|"
    r"i'm sorry|i am sorry|cannot (?:answer|provide|express))",
    re.IGNORECASE,
)


def looks_like_refusal(text: str) -> bool:
    """Whether ``text`` reads like a refusal to answer."""
    return bool(_REFUSAL.search(text))


def first_valid_int(text: str, options: Sequence[Option]) -> tuple[int | None, str]:
    """Parse ``text`` into an option value; returns ``(value, status)``."""
    valid = {o.value for o in options}
    for m in _INT.finditer(text):
        value = int(m.group())
        if value in valid:
            return value, "ok"
    lowered = text.lower()
    spans: list[tuple[int, int, int]] = []  # (start, end, value) of every label occurrence
    for o in options:
        label = o.label.lower().strip()
        if label:
            pattern = r"(?<![a-z])" + re.escape(label) + r"(?![a-z])"
            spans += [(m.start(), m.end(), o.value) for m in re.finditer(pattern, lowered)]
    # a label inside a longer matched label ("agree" in "strongly agree") does not count
    outer = [a for a in spans if not any(b != a and b[0] <= a[0] and a[1] <= b[1] for b in spans)]
    if outer:
        return min(outer)[2], "ok"
    return None, "refused" if looks_like_refusal(text) else "unparsed"


_INDEXED = re.compile(
    r"^\s*(?:statement|question)?\s*\d+\s*[:.)\-\u2013]\s*(\d+)\b", re.IGNORECASE | re.MULTILINE
)


def indexed_score(text: str, options: Sequence[Option]) -> tuple[int | None, str]:
    """Parse a PsychoBench-style ``"statement index: score"`` reply (e.g. ``"1: 4"``).

    The score after the index is taken (Huang et al., 2024, robust mode); an out-of-range score is
    "unparsed". Without an ``index: score`` line, ``first_valid_int`` decides.
    """
    m = _INDEXED.search(text)
    if m is None:
        return first_valid_int(text, options)
    value = int(m.group(1))
    return (value, "ok") if value in {o.value for o in options} else (None, "unparsed")


@hookimpl(trylast=True)
def register_parsers(register: Callable[..., None]) -> None:
    """Register the built-in parsers."""
    register("first_valid_int", first_valid_int)
    register("indexed_score", indexed_score)


@hookimpl(trylast=True)
def parse_response(
    instrument: Instrument,
    item: Item,
    prompt: Prompt,
    completion: Completion,
    parsers: Mapping[str, Parser],
) -> Answer:
    """Argmax over option log-probabilities when given, else the instrument's text parser
    (looked up in ``parsers``, the session's registered parsers by name)."""
    if completion.option_logprobs is not None:
        lps = list(completion.option_logprobs)
        top = max(lps)
        weights = [math.exp(lp - top) for lp in lps]
        total = sum(weights)
        probs = {o.value: w / total for o, w in zip(prompt.options, weights, strict=True)}
        best = max(range(len(lps)), key=lambda i: lps[i])
        return Answer(prompt.options[best].value, "ok", probs)
    parser = parsers.get(instrument.parser)
    if parser is None:
        raise PsymError(
            f"task '{instrument.id}' asks for parser '{instrument.parser}', which no "
            f"plugin registers (known: {', '.join(sorted(parsers))})"
        )
    value, status = parser(completion.text or "", prompt.options)
    return Answer(value, status)
