"""Recommended neighbourhoods from free text, matched to the offered names with rapidfuzz.

Numbered-list lines (``1. Name``, ``2) **Name** - why``) are read first; markdown is stripped
and a trailing description after " - ", " – ", " — " or ":" is cut. Names are normalised (case,
a leading "The", punctuation) and matched to the offered list with ``fuzz.token_sort_ratio``
(cut-off 85). Without a numbered list, offered names mentioned in the text are taken in order
of appearance. Duplicates count once; at most ``max_recs`` recommendations are kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["extract_recommendations", "normalise", "CUTOFF"]

CUTOFF = 85.0
_NUMBERED = re.compile(r"^\s*(?:[-*]\s*)?\(?\d+\s*[.):]\s*(.+?)\s*$")
_TAIL = re.compile(r"\s+[-–—]\s+.*$|\s*:.*$|\s*\(.*$")
_MARKDOWN = re.compile(r"[*_`#]+")


def normalise(name: str) -> str:
    """Lowercase, no markdown or punctuation, no leading 'the', single spaces."""
    text = _MARKDOWN.sub("", name).lower()
    text = re.sub(r"[^\w\s]", " ", text)
    text = re.sub(r"^\s*the\s+", "", text)
    return " ".join(text.split())


def _clean(line: str) -> str:
    text = _MARKDOWN.sub("", line).strip()
    return _TAIL.sub("", text).strip().rstrip(".,;")


def extract_recommendations(
    text: str, offered: Sequence[str], max_recs: int = 5
) -> tuple[list[str], list[str]]:
    """(matched offered names in order, unmatched listed names)."""
    from rapidfuzz import fuzz, process  # here: every psym command loads this plugin

    norm = {normalise(o): o for o in offered}
    choices = list(norm)
    matched: list[str] = []
    unmatched: list[str] = []
    listed = [_clean(m.group(1)) for line in text.splitlines() if (m := _NUMBERED.match(line))]
    if listed:
        for name in listed:
            key = normalise(name)
            if not key:
                continue
            hit = process.extractOne(
                key, choices, scorer=fuzz.token_sort_ratio, score_cutoff=CUTOFF
            )
            if hit is None:
                unmatched.append(name)
            elif norm[hit[0]] not in matched:
                matched.append(norm[hit[0]])
    else:
        body = " " + normalise(text) + " "
        found = [(body.find(f" {k} "), norm[k]) for k in choices if f" {k} " in body]
        matched = [name for _, name in sorted(found)]
    return matched[:max_recs], unmatched
