"""The ``interview-expert`` and ``interview-expert-all`` administrations: the interview's
questions asked as in ``interview``, then a judge scoring each scale from its question–answer
pairs (expert rating; InCharacter, Wang et al., 2024; the judge's side is
``interview_expert_judge``).

``interview-expert`` sends a scale's pairs in batches of 3–4 and scores the scale as the mean
of its batch scores; ``interview-expert-all`` sends all of a scale's pairs at once. A SUM scale
scores the mean rating times the scale's number of items (the sum of a person rating at that
level on every item). The judge rates the person's standing on the scale's construct on the
items' response range, reverse-keyed items marked as the opposite pole, so no key is applied
to its score again. A batch the judge scores "none" (or leaves unread) is left out of the
mean, with its reason; a scale with no scored batch is missing with the reasons
(``--impute midpoint`` scores such a batch the range's midpoint instead, marked ``imputed``).

Items have no answer of their own here: each item's sample keeps its question and open answer,
``parse_status`` its batches' outcome, and ``data.expert`` the score of every batch it was in
(one per scale it counts towards); the scale scores are computed from those
(``rate_scales``), so ``psym judge`` re-scores a run the same way. Scales the expert cannot
rate on the items' range (MRAT-centred, inverted, rescaled, or with items on different
response scales) are missing with that reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psymetrics_core.administer.administration.interview import Asked, Interview
from psymetrics_core.administer.administration.interview_expert_judge import (
    BatchRating,
    Construct,
    Pair,
    rate_scales_by_expert,
)
from psymetrics_core.administer.administration.interview_judge import Rating
from psymetrics_core.administer.administration.verbalized import PATTERN_INDICATORS
from psymetrics_core.base.types import Answer, Instrument, Item, ScaleScore
from psymetrics_core.contracts.administration import RatedScale
from psymetrics_core.contracts.judging import StageJudge

__all__ = [
    "INTERVIEW_EXPERT",
    "INTERVIEW_EXPERT_ALL",
    "InterviewExpert",
    "InterviewExpertAll",
    "unratable",
]

NO_ITEM_ANSWERS = (
    "expert rating: the judge scored whole scales (samples.jsonl data.expert), no item has an "
    "answer of its own to check"
)
INTERVIEW_EXPERT = "interview-expert"
INTERVIEW_EXPERT_ALL = "interview-expert-all"


def unratable(inst: Instrument, scale: str, form: str) -> str | None:
    """Why the expert cannot score ``scale`` on its items' response range (None: it can)."""
    sdef = inst.scales[scale]
    members = inst.scale_items(scale, form)
    if sdef.centre:
        why = f"it is centred ({sdef.centre}), which needs each item's answer"
    elif sdef.invert:
        why = "it inverts its items' keyed values"
    elif sdef.rescale or any(it.rescale for it in members):
        why = "its items are rescaled"
    elif sdef.method not in ("mean", "sum"):
        why = f"its scoring method is {sdef.method!r}"
    elif len({it.response_scale for it in members}) > 1:
        why = "its items are on different response scales"
    else:
        return None
    return f"an expert rating cannot score scale '{scale}': {why} (use --condition interview)"


def _construct(inst: Instrument, scale: str, item: Item) -> Construct:
    sdef = inst.scales[scale]
    parts = [p for p in (sdef.description, sdef.higher_is and f"higher is {sdef.higher_is}") if p]
    if sdef.adjectives:
        parts.append("a person high on it is described as " + ", ".join(sdef.adjectives))
    rs = inst.response_scales[item.response_scale]
    about = (": " + "; ".join(parts)) if parts else ""
    return Construct(inst.name, scale, about, rs.min, rs.max)


class InterviewExpert(Interview):
    """The interview's questions, then a judge scoring each scale from batches of 3–4 of its
    question–answer pairs (the scale score: the mean of the batch scores)."""

    name = INTERVIEW_EXPERT
    method = "expert-rating"
    batched = False  # scales in batches of 3-4 (or all), not --judge-batch
    all_at_once = False

    def rate(
        self,
        judge: StageJudge,
        inst: Instrument,
        form: str,
        asked: Sequence[Asked],
        tag: dict[str, Any],
        impute: str | None,
    ) -> list[tuple[Answer, Rating]]:
        """Each item's answer (no value: the item is scored through its scales) and rating:
        its batches' outcome; every batch score is in the answer's ``data.expert``."""
        scales = []
        for scale in inst.scales:
            pairs = [
                Pair(a.item, a.prompt.text, a.answer)
                for a in asked
                if a.item.scored and inst.counts_towards(a.item, scale)
            ]
            if pairs and unratable(inst, scale, form) is None:
                scales.append((_construct(inst, scale, pairs[0].item), pairs))
        batches = rate_scales_by_expert(judge, inst.id, scales, tag, self.method, self.all_at_once)
        if impute == "midpoint":
            mids = {c.scale: (c.lo + c.hi) / 2 for c, _ in scales}
            batches = [_imputed(b, mids[b.scale]) for b in batches]
        by_item: dict[str, list[BatchRating]] = {}
        for b in batches:
            for i in b.items:
                by_item.setdefault(i, []).append(b)
        return [_item_answer(by_item.get(a.item.id, [])) for a in asked]

    def rate_scales(
        self, inst: Instrument, form: str, answers: Sequence[tuple[Item, Answer]]
    ) -> dict[str, RatedScale]:
        """Every scale's score from its batch scores (``data.expert`` of the answers)."""
        seen: dict[str, dict[int, dict[str, Any]]] = {}
        for _, a in answers:
            for b in (a.data or {}).get("expert", []):
                seen.setdefault(b["scale"], {})[b["batch"]] = b
        return {
            scale: _scale_score(inst, form, scale, seen.get(scale, {})) for scale in inst.scales
        }

    def annotate(self, entry: dict[str, Any]) -> dict[str, Any]:
        """The judge method, and why the answer-pattern indicators have no value."""
        entry = super().annotate(entry)
        indicators = entry.get("indicators") or {}
        for name in PATTERN_INDICATORS:
            if name in indicators and indicators[name].get("value") is None:
                indicators[name]["reason"] = NO_ITEM_ANSWERS
        return entry


class InterviewExpertAll(InterviewExpert):
    """Expert rating from all of a scale's question–answer pairs at once."""

    name = INTERVIEW_EXPERT_ALL
    method = "expert-rating-all"
    all_at_once = True


def _imputed(b: BatchRating, mid: float) -> BatchRating:
    """InCharacter's choice: an unscored batch is the range's midpoint, marked so."""
    if b.score is not None:
        return b
    return BatchRating(b.scale, b.batch, b.items, mid, "ok", b.reason, b.attempts, "midpoint")


def _item_answer(batches: Sequence[BatchRating]) -> tuple[Answer, Rating]:
    """An item's answer and rating from the batches it was in (none: no ratable scale)."""
    data: dict[str, Any] = {"expert": [b.to_json() for b in batches]}
    attempts = max((b.attempts for b in batches), default=1)
    if any(b.imputed for b in batches):
        data["imputed"] = "midpoint"
    if any(b.score is not None for b in batches):
        return Answer(None, "ok", data=data), Rating(None, "ok", None, attempts)
    if not batches:
        reason = "the item counts towards no scale an expert rating can score"
        status = "refused"
    else:
        reason = "; ".join(dict.fromkeys(str(b.reason) for b in batches))
        status = "unparsed" if any(b.status == "unparsed" for b in batches) else "refused"
    data["reason"] = reason
    return Answer(None, status, data=data), Rating(None, status, reason, attempts)


def _scale_score(
    inst: Instrument, form: str, scale: str, batches: dict[int, dict[str, Any]]
) -> RatedScale:
    """The scale's score: the mean of its batch scores (times its items, a SUM scale)."""
    sdef = inst.scales[scale]
    n_items = len(inst.scale_items(scale, form))
    why = unratable(inst, scale, form)
    scored = [b for b in batches.values() if b.get("score") is not None]
    if why is None and not batches:
        why = "no item of the scale was asked"
    elif why is None and not scored:
        why = "; ".join(dict.fromkeys(str(b.get("reason")) for b in batches.values()))
    if why is not None:
        return RatedScale(ScaleScore(scale, None, n_items, 0, sdef.method), why)
    mean = sum(float(b["score"]) for b in scored) / len(scored)
    value = mean * n_items if sdef.method == "sum" else mean
    n_answered = sum(len(b["items"]) for b in scored)
    return RatedScale(ScaleScore(scale, value, n_items, n_answered, sdef.method))
