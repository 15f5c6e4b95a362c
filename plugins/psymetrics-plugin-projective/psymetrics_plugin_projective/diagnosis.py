"""Diagnostician stage: the interpretation block, the four task prompts and their parsers.

Prompts and answer formats are the authors' code release verbatim (Wang et al. 2026; the paper
prints none): Big Five ``v6``, MBTI ``v3``, depression ``v3``, suicide ``v5``. The released
code shows the persona's description to the diagnostician for Big Five and MBTI as "PRIMARY
evidence", which leaks the target; here that is the option ``show_persona`` (off by default).
Unlike the released code, a reply without a parseable answer is ``None`` (not level 3, "XXXX"
or 0).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .coding import SCORSG_DIMS, SRAS_VARS, Coded, strip_think
from .prompts import fill, prompt

__all__ = [
    "TARGETS",
    "BIG_FIVE",
    "MBTI_AXES",
    "Diagnosis",
    "TatCard",
    "SctItem",
    "interpretation_block",
    "diagnostician_prompt",
    "parse_diagnosis",
    "mbti_axes",
]

TARGETS = ("big_five", "mbti", "depression", "suicide")
BIG_FIVE = ("O", "C", "E", "A", "N")
MBTI_AXES = ("EI", "SN", "TF", "JP")  # value 0 = first letter, 1 = second (authors' encoding)
PERSONA_SUMMARY_CHARS = 1500
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.S | re.I)
_ANALYSIS = re.compile(r"<analysis>(.*?)(?:</analysis>|$)", re.S | re.I)


@dataclass(frozen=True)
class TatCard:
    """One coded TAT story: card id and SCORS-G codes."""

    card: str
    coded: Coded


@dataclass(frozen=True)
class SctItem:
    """One coded SCT stem: id, score 0-6 (None = unparsed) and the judge's evidence."""

    stem_id: str
    score: int | None
    explanation: str = ""


@dataclass(frozen=True)
class Diagnosis:
    """A parsed diagnostician reply: levels per dimension, MBTI type, explanation, status."""

    target: str
    values: dict[str, int | None]
    explanation: str = ""
    status: str = "ok"
    reason: str | None = None
    mbti_type: str | None = None
    missing: tuple[str, ...] = field(default=())


def _num(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def interpretation_block(
    *,
    tat: Sequence[TatCard] = (),
    tat_means: Mapping[str, float | None] | None = None,
    sras: Coded | None = None,
    sras_scores: Mapping[str, float | None] | None = None,
    sct_items: Sequence[SctItem] = (),
    sct_means: Mapping[str, float | None] | None = None,
) -> str:
    """The interpreter's indicators in the layout of the authors' ``_format_interpretation_block``.

    Sections without data are left out (each test is diagnosed from its own indicators).
    """
    parts: list[str] = []
    if tat_means is not None:
        lines = ["TAT / SCORS-G (aggregated across cards, 1–7 scale):"]
        lines += [f"  {d}: {_num(tat_means.get(d))}" for d in SCORSG_DIMS]
        lines += ["", "TAT per-card highlights:"]
        for card in tat:
            vals = card.coded.values
            codes = ", ".join(
                f"{d}={vals.get(d) if vals.get(d) is not None else 'n/a'}" for d in SCORSG_DIMS
            )
            lines.append(f"  [{card.card}] {codes}")
            scored = [d for d in SCORSG_DIMS if vals.get(d) is not None]
            extreme = sorted(scored, key=lambda d: -abs((vals[d] or 4) - 4))[:2]
            for d in extreme:
                if card.coded.explanations.get(d):
                    lines.append(f"    {d}: {card.coded.explanations[d][:180]}")
        parts.append("\n".join(lines))
    if sras_scores is not None:
        lines = [
            "Rorschach / SRAS domain scores:",
            f"  CPS (cognitive processing): {_num(sras_scores.get('CPS'))}",
            f"  ARS (affective regulation): {_num(sras_scores.get('ARS'))}",
            f"  IRS (interpersonal):        {_num(sras_scores.get('IRS'))}",
            f"  SCS (stress coping D):      {_num(sras_scores.get('SCS'))}",
        ]
        if sras is not None:
            nz = [f"{k}={sras.values[k]}" for k in SRAS_VARS if sras.values.get(k)]
            lines.append("  Encoding counts: " + (", ".join(nz) if nz else "(none)"))
        parts.append("\n".join(lines))
    if sct_means is not None:
        lines = ["SCT domain scores (0=adjusted → 6=conflicted):"]
        lines += [f"  {d}: {_num(v)}" for d, v in sct_means.items()]
        top = sorted((i for i in sct_items if i.score is not None), key=lambda i: -(i.score or 0))
        lines += ["", "Most conflicted SCT items:"]
        lines += [f"  [{i.stem_id}] score={i.score} — {i.explanation[:140]}" for i in top[:5]]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def diagnostician_prompt(
    target: str, block: str, persona_summary: str | None = None
) -> tuple[str, str]:
    """(system, user) messages for ``target``; ``persona_summary`` only for big_five / mbti."""
    if target not in TARGETS:
        raise ValueError(f"unknown diagnosis target {target!r}")
    instructions = prompt(f"diag_{target}")
    if persona_summary and target in ("big_five", "mbti"):
        user = fill(
            prompt("diag_user_with_persona"),
            instructions=instructions,
            persona_summary=persona_summary[:PERSONA_SUMMARY_CHARS],
            interpretation_block=block,
        )
    else:
        user = fill(prompt("diag_user"), instructions=instructions, interpretation_block=block)
    return prompt("diag_system"), user


def mbti_axes(mbti_type: str | None) -> dict[str, int | None]:
    """EI, SN, TF, JP as 0 (E, S, T, J) or 1 (I, N, F, P); all None without a type."""
    if not mbti_type:
        return dict.fromkeys(MBTI_AXES)
    t = mbti_type.upper()
    return {ax: (0 if t[i] == ax[0] else 1) for i, ax in enumerate(MBTI_AXES)}


def parse_diagnosis(target: str, text: str) -> Diagnosis:
    """Parse a diagnostician reply for ``target`` (answer block first, then the whole reply)."""
    body = strip_think(text)
    m = _ANSWER.search(body)
    answer = m.group(1) if m else ""
    am = _ANALYSIS.search(body)
    explanation = (am.group(1) if am else _ANSWER.sub("", body)).strip()
    where = [answer, body] if answer else [body]
    if target == "big_five":
        values: dict[str, int | None] = {}
        for dim in BIG_FIVE:
            values[dim] = _first_level(where, rf"\b{dim}\s*=\s*(\d)", 1, 5, 0)
        missing = tuple(d for d, v in values.items() if v is None)
        status = "ok" if len(missing) < len(BIG_FIVE) else "unparsed"
        reason = None if status == "ok" else "no 'X=<1-5>' levels in the reply"
        return Diagnosis(target, values, explanation, status, reason, missing=missing)
    if target == "mbti":
        found = None
        for chunk in where:
            mm = re.search(r"\b([EI][SN][TF][JP])\b", chunk.upper())
            if mm:
                found = mm.group(1)
                break
        status, reason = ("ok", None) if found else ("unparsed", "no 4-letter MBTI type")
        axes = mbti_axes(found)
        miss = () if found else MBTI_AXES
        return Diagnosis(target, axes, explanation, status, reason, found, miss)
    label = "Depression" if target == "depression" else "Suicide"
    level = _first_level(where, rf"{label}\s*=\s*(\d)", 0, 3)
    status, reason = ("ok", None) if level is not None else ("unparsed", f"no '{label}=<0-3>'")
    return Diagnosis(
        target,
        {target: level},
        explanation,
        status,
        reason,
        missing=() if level is not None else (target,),
    )


def _first_level(
    chunks: Sequence[str], pattern: str, low: int, high: int, flags: int = re.I
) -> int | None:
    for chunk in chunks:
        m = re.search(pattern, chunk, flags)
        if m:
            v = int(m.group(1))
            return v if low <= v <= high else None
    return None
