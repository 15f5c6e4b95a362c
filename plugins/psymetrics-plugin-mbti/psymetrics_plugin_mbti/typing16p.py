"""Scoring helpers of the ``16p`` task: 0-100 dimension scores and the four-letter type."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

__all__ = ["TASK", "DIMENSIONS", "ROLES", "percent_scores", "type_code", "type_record"]

TASK = "16p"
KEY_FLAG = "unofficial"
# scale name -> (first-pole letter, second-pole letter), in the paper's order E, N, T, J, A
DIMENSIONS = {
    "extraverted": ("E", "I"),
    "intuitive": ("N", "S"),
    "thinking": ("T", "F"),
    "judging": ("J", "P"),
    "assertive": ("A", "T"),
}
# Rao et al. (2023) App. C.2 (Rao et al., 2023); roles do not depend on the -A/-T suffix
ROLES = {
    "INTJ": "Architect",
    "INTP": "Logician",
    "ENTJ": "Commander",
    "ENTP": "Debater",
    "INFJ": "Advocate",
    "INFP": "Mediator",
    "ENFJ": "Protagonist",
    "ENFP": "Campaigner",
    "ISTJ": "Logistician",
    "ISFJ": "Defender",
    "ESTJ": "Executive",
    "ESFJ": "Consul",
    "ISTP": "Virtuoso",
    "ISFP": "Adventurer",
    "ESTP": "Entrepreneur",
    "ESFP": "Entertainer",
}


def percent_scores(instrument: Any, responses: Mapping[str, int | None], form: str) -> dict:
    """Each dimension's mean of recoded items (1-7) mapped linearly onto 0-100."""
    from psymetrics_core.api import default_score as core_score

    out = {}
    for name, s in core_score(instrument=instrument, responses=responses, form=form).items():
        pct = None if s.score is None else (s.score - 1.0) / 6.0 * 100.0
        out[name] = replace(s, score=pct, method="percent_first_pole")
    return out


def type_code(scores: Mapping[str, float | None]) -> str | None:
    """The type, e.g. ``ENTJ-T``: first-pole letter at >= 50; None if a dimension is missing."""
    letters = []
    for name, (first, second) in DIMENSIONS.items():
        value = scores.get(name)
        if value is None:
            return None
        letters.append(first if value >= 50 else second)
    return "".join(letters[:4]) + "-" + letters[4]


def type_record(scores: Mapping[str, Any]) -> dict[str, Any]:
    """``type``, ``role`` and the ``key`` flag for a results entry."""
    plain = {k: getattr(v, "score", v) for k, v in scores.items()}
    code = type_code(plain)
    return {
        "type": code,
        "role": ROLES.get(code[:4]) if code else None,
        "key": KEY_FLAG,
        "key_note": "unofficial content key (psymetrics); not the proprietary 16Personalities key",
    }
