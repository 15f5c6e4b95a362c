"""Stage 2 of the pipeline for each test: judge requests, verdict parsing and indicators.

Pure functions between the examinee's texts and the judge: each test builds its interpreter
requests (TAT: one SCORS-G call per story; Rorschach: one SRAS call over all cards; SCT: one
call over all stems, as in Wang et al. 2026 App. B.4-B.6), turns the parsed codes into
indicator scores and into the interpretation block the diagnostician reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .coding import SCORSG_DIMS, Coded, mean_or_none, sras_domains
from .diagnosis import SctItem, TatCard, interpretation_block
from .prompts import fill, prompt
from .sct import DOMAINS

__all__ = [
    "Indicator",
    "Interpretation",
    "tat_request",
    "sras_request",
    "sct_request",
    "interpret_tat",
    "interpret_rorschach",
    "interpret_sct",
    "NARRATIVE_CHARS",
]

NARRATIVE_CHARS, PERCEPTION_CHARS, INQUIRY_CHARS, COMPLETION_CHARS = 4000, 800, 500, 300


@dataclass(frozen=True)
class Indicator:
    """One indicator score: value (None with a reason) and the number of codes behind it."""

    name: str
    value: float | None
    reason: str | None
    n: int
    description: str = ""


@dataclass(frozen=True)
class Interpretation:
    """A test's indicators, the diagnostician's interpretation block and the coding counts."""

    indicators: list[Indicator]
    block: str
    n_codes: int
    n_codes_parsed: int
    detail: dict[str, object] = field(default_factory=dict)


def tat_request(card_id: str, narrative: str) -> tuple[str, str]:
    """(system, user) of the SCORS-G coding of one story."""
    user = fill(prompt("scorsg_user"), image_id=card_id, narrative=narrative[:NARRATIVE_CHARS])
    return prompt("scorsg_system"), user


def sras_request(cards: Sequence[tuple[int, str, str]]) -> tuple[str, str]:
    """(system, user) of the SRAS coding of a protocol: (card number, perception, inquiry)."""
    blocks = []
    for n, perception, inquiry in cards:
        text = f"Card {n}:\n  Perception: {perception[:PERCEPTION_CHARS]}"
        if inquiry:
            text += f"\n  Inquiry:    {inquiry[:INQUIRY_CHARS]}"
        blocks.append(text)
    return prompt("sras_system"), fill(prompt("sras_user"), cards_block="\n\n".join(blocks))


def sct_request(items: Sequence[tuple[str, str, str]]) -> tuple[str, str]:
    """(system, user) of the SCT coding of all stems: (stem id, stem, completion)."""
    lines = [
        f"[{sid}] Stem: {stem}\n           Completion: {completion[:COMPLETION_CHARS]}"
        for sid, stem, completion in items
    ]
    return prompt("sct_system"), fill(prompt("sct_user"), items_block="\n".join(lines))


def interpret_tat(cards: Sequence[tuple[str, Coded | None]]) -> Interpretation:
    """SCORS-G means over the coded stories (Eq. 6); None codes (unjudged) count as missing."""
    coded = [TatCard(cid, c) for cid, c in cards if c is not None]
    indicators = []
    means: dict[str, float | None] = {}
    for dim in SCORSG_DIMS:
        value, why, n = mean_or_none([c.coded.values.get(dim) for c in coded], f"{dim} code")
        means[dim] = value
        indicators.append(Indicator(dim, value, why, n, f"SCORS-G {dim}, mean over stories (1-7)"))
    n_parsed = sum(c.coded.status == "ok" for c in coded)
    per_card = {c.card: c.coded.values for c in coded}
    return Interpretation(
        indicators,
        interpretation_block(tat=coded, tat_means=means),
        len(cards),
        n_parsed,
        {"scorsg_per_card": per_card},
    )


def interpret_rorschach(coded: Coded | None) -> Interpretation:
    """SRAS domain scores from the protocol's 22 counts (raw, unstandardised)."""
    counts: Mapping[str, int | None] = coded.values if coded is not None else {}
    domains = sras_domains(counts) if coded is not None else {}
    indicators = []
    for name in ("CPS", "ARS", "IRS", "SCS", "EA", "es"):
        value, why = domains.get(name, (None, "the protocol was not coded"))
        indicators.append(
            Indicator(name, value, why, 1 if value is not None else 0, f"SRAS {name}")
        )
    scores = {i.name: i.value for i in indicators}
    return Interpretation(
        indicators,
        interpretation_block(sras=coded, sras_scores=scores),
        1,
        int(coded is not None and coded.status == "ok"),
        {"sras_counts": dict(counts)},
    )


def interpret_sct(stems: Sequence[tuple[str, str]], coded: Coded | None) -> Interpretation:
    """Per-domain means of the 0-6 stem scores (Eq. 9): stems as (stem id, domain)."""
    values = coded.values if coded is not None else {}
    explain = coded.explanations if coded is not None else {}
    items = [SctItem(sid, values.get(sid), explain.get(sid, "")) for sid, _ in stems]
    indicators = []
    means: dict[str, float | None] = {}
    for dom in DOMAINS:
        mine = [values.get(sid) for sid, d in stems if d == dom]
        if not mine:
            means[dom] = None
            indicators.append(Indicator(dom, None, "no stem of this domain was given", 0))
            continue
        value, why, n = mean_or_none(mine, f"{dom} stem score")
        means[dom] = value
        indicators.append(Indicator(dom, value, why, n, f"SCT {dom}, mean stem score (0-6)"))
    n_parsed = sum(v is not None for v in values.values())
    return Interpretation(
        indicators,
        interpretation_block(sct_items=items, sct_means=means),
        len(stems),
        n_parsed,
        {"sct_per_stem": dict(values)},
    )
