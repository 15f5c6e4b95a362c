"""Subject-replaced statements (Rao et al., 2023, "SRQ"): "You ..." / "I ..." -> "Women ...".

Rao et al. (2023) replace the subject "You" with a group and "your" with "their". This module does
the same for first- and second-person statements: the first personal pronoun becomes the subject,
later ones become they/them/their/theirs/themselves (or the singular set given with the subject,
e.g. ``subject=Taylor Swift/she``). For a singular subject the verb right after the subject gets
third-person -s (a heuristic; the paper gives no rewriting algorithm).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from psymetrics_core.base.errors import PsymError

__all__ = ["Subject", "parse_subject", "rewrite_statement"]

_PRONOUNS = {
    "they": ("they", "them", "their", "theirs", "themselves"),
    "she": ("she", "her", "her", "hers", "herself"),
    "he": ("he", "him", "his", "his", "himself"),
}

# words after which "you" is an object ("make you feel", "to you")
_OBJECT_CONTEXT = set(
    "to for with at about from of on in by than make makes let lets help helps tell tells give "
    "gives ask asks see sees bother bothers upset upsets annoy annoys around".split()
)
_BE = {"am": "are", "are": "are", "was": "were", "were": "were"}
_BE_SG = {"am": "is", "are": "is", "was": "was", "were": "was"}
_TOKEN = re.compile(r"\b(I'm|you're|I|me|my|mine|myself|you|your|yours|yourself|yourselves)\b")
_TOKEN_CI = re.compile(_TOKEN.pattern, re.IGNORECASE)


@dataclass(frozen=True)
class Subject:
    """Who the statement is about: the text and its pronoun set (plural "they" by default)."""

    text: str
    pronoun: str = "they"

    @property
    def plural(self) -> bool:
        """Whether verbs agree in the plural."""
        return self.pronoun == "they"


def parse_subject(arg: str) -> Subject:
    """``women`` -> plural subject; ``Taylor Swift/she`` -> singular with she/her pronouns."""
    text, _, pron = arg.partition("/")
    pron = pron.strip().lower() or "they"
    if pron not in _PRONOUNS:
        raise PsymError(
            f"subject={arg}: pronoun set must be one of {', '.join(_PRONOUNS)} (e.g. "
            "subject=Taylor Swift/she)"
        )
    return Subject(text.strip(), pron)


def _third_person(verb: str) -> str:
    low = verb.lower()
    if low in ("have",):
        return "has"
    if low in ("do", "go"):
        return verb + "es"
    if re.search(r"(s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def rewrite_statement(text: str, subject: Subject) -> str:
    """Rewrite first/second-person ``text`` about ``subject``; unchanged if it has no pronoun."""
    they, them, their, theirs, themselves = _PRONOUNS[subject.pronoun]
    out: list[str] = []
    pos = 0
    first = True
    for m in _TOKEN_CI.finditer(text):
        if m.start() < pos:
            continue
        low = m.group(0).lower()
        before = text[: m.start()]
        prev = re.findall(r"[A-Za-z']+", before)
        prev_word = prev[-1].lower() if prev else ""
        sentence_start = not before.strip() or before.rstrip().endswith((".", "!", "?", ":"))
        end = m.end()
        if low in ("my", "your"):
            rep = (subject.text + "'s") if first else their
        elif low in ("mine", "yours"):
            rep = theirs
        elif low in ("myself", "yourself", "yourselves"):
            rep = themselves
        elif low == "me" or (low == "you" and prev_word in _OBJECT_CONTEXT):
            rep = subject.text if first else them
        elif low in ("i'm", "you're"):
            rep = (subject.text if first else they) + (" are" if subject.plural else " is")
        else:  # subject position: I, you
            rep = subject.text if first else they
            verb, end = _agree_next(text, end, subject)
            rep += verb
        if sentence_start:
            rep = rep[0].upper() + rep[1:]
        first = False
        out.append(text[pos : m.start()])
        out.append(rep)
        pos = end
    out.append(text[pos:])
    return "".join(out)


_NEXT_WORD = re.compile(r"(\s+)([A-Za-z']+)")
_NOT_VERBS = set(
    "usually often rarely always never really also sometimes just still definitely generally "
    "seldom not".split()
)
_MODALS = {"can", "could", "will", "would", "should", "may", "might", "must", "did"}


def _agree_next(text: str, end: int, subject: Subject) -> tuple[str, int]:
    """The next word after a subject pronoun, made to agree with ``subject``, and its end."""
    m = _NEXT_WORD.match(text, end)
    if not m:
        return "", end
    space, word = m.group(1), m.group(2)
    low = word.lower()
    if low in _BE:
        return space + (_BE[low] if subject.plural else _BE_SG[low]), m.end()
    if subject.plural or low in _MODALS:
        return "", end
    if low in _NOT_VERBS or low.endswith("ly"):  # "I usually stay" -> "She usually stays"
        verb, vend = _agree_next(text, m.end(), subject)
        return space + word + verb, vend
    if low == "do":
        return space + "does", m.end()
    return space + _third_person(word), m.end()
