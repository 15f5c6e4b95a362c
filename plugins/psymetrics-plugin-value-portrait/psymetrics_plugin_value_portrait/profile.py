"""The generation-probability profile (Song et al. 2025, after Value Portrait's tagging).

A response counts for a construct when its ρ tag is at least ``threshold`` (default 0.3; only
positive tags, weight 1, a response may count for several constructs). A scenario's score for a
construct is the mean of its tagged responses' log-probabilities; the construct's score is the
mean over the scenarios that have a tagged response. A construct without any tagged response is
undefined (None, with the reason), never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["ScoredResponse", "ConstructScore", "profile", "response_value"]


@dataclass(frozen=True)
class ScoredResponse:
    """One response's scores: summed log-probability, token count, and its ρ tags."""

    scenario: int
    response: int
    logprob: float
    n_tokens: int | None
    tags: Mapping[str, float]


@dataclass(frozen=True)
class ConstructScore:
    """A construct's profile score (None with ``reason`` when undefined) and its counts."""

    construct: str
    value: float | None
    reason: str | None
    n_scenarios: int
    n_responses: int


def response_value(r: ScoredResponse, length: str) -> float | None:
    """The summed log-probability (``length="sum"``) or its per-token mean (``"mean"``; None
    when the token count is unknown or zero)."""
    if length == "sum":
        return r.logprob
    if not r.n_tokens:
        return None
    return r.logprob / r.n_tokens


def profile(
    responses: Sequence[ScoredResponse],
    constructs: Sequence[str],
    threshold: float = 0.3,
    length: str = "sum",
) -> list[ConstructScore]:
    """Per construct, the mean over scenarios of the mean over its tagged responses."""
    out = []
    for c in constructs:
        by_scenario: dict[int, list[float]] = {}
        missing = 0
        for r in responses:
            if r.tags.get(c, float("-inf")) < threshold:
                continue
            v = response_value(r, length)
            if v is None:
                missing += 1
                continue
            by_scenario.setdefault(r.scenario, []).append(v)
        n_resp = sum(len(v) for v in by_scenario.values())
        if not by_scenario:
            why = f"no scored response has a {c} tag >= {threshold}"
            if missing:
                why += f" ({missing} tagged responses have no token count for the per-token mean)"
            out.append(ConstructScore(c, None, why, 0, 0))
            continue
        means = [sum(v) / len(v) for v in by_scenario.values()]
        out.append(ConstructScore(c, sum(means) / len(means), None, len(means), n_resp))
    return out
