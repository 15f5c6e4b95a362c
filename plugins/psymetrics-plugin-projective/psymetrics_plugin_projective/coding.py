"""Interpreter codes: parsers for SCORS-G, SRAS and SCT judge replies, and the SRAS formulas.

Replies follow the paper's ``<analysis>…</analysis><answer>{json}</answer>`` format (Wang et
al. 2026, §4.2, App. B.4-B.6). Parsers are pure. Unlike the authors' code, nothing is
defaulted: a missing, non-integer or out-of-range value is ``None`` and named in ``missing``
(the authors' code silently puts 4 for SCORS-G, 0 for SRAS and 3 for SCT), and a score that
depends on a missing value is ``None`` with a reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Coded",
    "SCORSG_DIMS",
    "SCORSG_NAMES",
    "SRAS_VARS",
    "SRAS_DOMAINS",
    "strip_think",
    "answer_json",
    "parse_scorsg",
    "parse_sras",
    "parse_sct",
    "sras_domains",
    "mean_or_none",
]

SCORSG_DIMS = ("COM", "AFF", "EIR", "EIM", "SC", "AGG", "SE", "ICS")
SCORSG_NAMES = {
    "COM": "Complexity of Representations of People",
    "AFF": "Affective Quality of Representations",
    "EIR": "Emotional Investment in Relationships",
    "EIM": "Emotional Investment in Values and Moral Standards",
    "SC": "Understanding of Social Causality",
    "AGG": "Experience and Management of Aggressive Impulses",
    "SE": "Self-Esteem",
    "ICS": "Identity and Coherence of Self",
}
SRAS_VARS = (
    "P",
    "FQo",
    "FQu",
    "FQ-",
    "WSumCog",
    "FC",
    "CF",
    "C",
    "C'",
    "Y",
    "V",
    "T",
    "M",
    "FM",
    "m",
    "COP",
    "AG",
    "MOR",
    "AGC",
    "AGM",
    "H",
    "M-",
)
SRAS_DOMAINS = {
    "CPS": "cognitive processing: 2P + FQo - (FQu + 3 FQ- + WSumCog)",
    "ARS": "affective regulation: 2FC - (CF + 2C + C' + Y + V)",
    "IRS": "interpersonal relations: 3M + 2COP + H - [2(AGC + AGM) + 2MOR + 3M-]",
    "EA": "experiential availability: M + (0.5FC + CF + 1.5C)",
    "es": "experiential stimulation: FM + m + Y + T + V + C'",
    "SCS": "stress coping: EA - es (raw D; the paper's standardisation has no published norms)",
}
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.S | re.I)
_ANALYSIS = re.compile(r"<analysis>(.*?)(?:</analysis>|$)", re.S | re.I)


@dataclass(frozen=True)
class Coded:
    """Parsed codes of one judge reply.

    ``values`` maps each expected key to an int or None; ``missing`` lists the keys left None;
    ``status`` is ``"ok"`` when at least one value parsed, else ``"unparsed"`` with ``reason``.
    """

    values: dict[str, int | None]
    explanations: dict[str, str] = field(default_factory=dict)
    status: str = "ok"
    reason: str | None = None
    missing: tuple[str, ...] = ()
    analysis: str = ""


def strip_think(text: str) -> str:
    """The reply without ``<think>…</think>`` blocks (reasoning models)."""
    return _THINK.sub("", text or "").strip()


def answer_json(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object inside ``<answer>`` (else the first ``{…}`` in the reply), or a reason."""
    body = strip_think(text)
    m = _ANSWER.search(body)
    candidates = [m.group(1)] if m else []
    candidates.append(body)
    for chunk in candidates:
        start = chunk.find("{")
        while start >= 0:
            obj, end = _decode_from(chunk, start)
            if isinstance(obj, dict):
                return obj, None
            start = chunk.find("{", start + 1)
    return None, "no JSON object in the reply" if body else "empty reply"


def _decode_from(text: str, start: int) -> tuple[Any, int]:
    try:
        return json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        return None, start


def _int_value(raw: Any) -> int | None:
    if isinstance(raw, dict) and "score" in raw:
        raw = raw["score"]
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str) and re.fullmatch(r"\s*-?\d+\s*", raw):
        return int(raw)
    return None


def _coded(
    text: str, keys: Sequence[str], low: int, high: int | None, explain: Mapping[str, str]
) -> Coded:
    obj, why = answer_json(text)
    analysis = _analysis(text)
    if obj is None:
        return Coded(dict.fromkeys(keys), dict(explain), "unparsed", why, tuple(keys), analysis)
    values: dict[str, int | None] = {}
    bad: list[str] = []
    for k in keys:
        v = _int_value(obj.get(k))
        if v is None or v < low or (high is not None and v > high):
            values[k] = None
            bad.append(k)
        else:
            values[k] = v
    if len(bad) == len(keys):
        rng = f"{low}-{high}" if high is not None else f">= {low}"
        reason = f"no key with an integer in {rng}"
        return Coded(values, dict(explain), "unparsed", reason, tuple(bad), analysis)
    return Coded(values, dict(explain), "ok", None, tuple(bad), analysis)


def _analysis(text: str) -> str:
    m = _ANALYSIS.search(strip_think(text))
    return m.group(1).strip() if m else ""


def parse_scorsg(text: str) -> Coded:
    """SCORS-G: eight integers 1-7 keyed COM … ICS; explanations from ``DIM: …`` lines."""
    analysis = _analysis(text)
    explain = {}
    for dim in SCORSG_DIMS:
        m = re.search(rf"^\s*{dim}\s*[:：]\s*(.+)$", analysis, re.M)
        if m:
            explain[dim] = m.group(1).strip()[:400]
    return _coded(text, SCORSG_DIMS, 1, 7, explain)


def parse_sras(text: str) -> Coded:
    """SRAS: the 22 non-negative integer counts."""
    return _coded(text, SRAS_VARS, 0, None, {})


def parse_sct(text: str, stem_ids: Sequence[str]) -> Coded:
    """SCT: one integer 0-6 per stem id; explanations from ``[stem_id] …`` analysis lines."""
    analysis = _analysis(text)
    explain = {}
    for sid in stem_ids:
        m = re.search(rf"^\s*\[{re.escape(sid)}\]\s*(.+)$", analysis, re.M)
        if m:
            explain[sid] = m.group(1).strip()[:300]
    return _coded(text, list(stem_ids), 0, 6, explain)


_Counts = Mapping[str, float]
_FORMULAS: dict[str, tuple[tuple[str, ...], Callable[[_Counts], float]]] = {
    "CPS": (
        ("P", "FQo", "FQu", "FQ-", "WSumCog"),
        lambda v: 2 * v["P"] + v["FQo"] - (v["FQu"] + 3 * v["FQ-"] + v["WSumCog"]),
    ),
    "ARS": (
        ("FC", "CF", "C", "C'", "Y", "V"),
        lambda v: 2 * v["FC"] - (v["CF"] + 2 * v["C"] + v["C'"] + v["Y"] + v["V"]),
    ),
    "IRS": (
        ("M", "COP", "H", "AGC", "AGM", "MOR", "M-"),
        lambda v: (
            3 * v["M"]
            + 2 * v["COP"]
            + v["H"]
            - (2 * (v["AGC"] + v["AGM"]) + 2 * v["MOR"] + 3 * v["M-"])
        ),
    ),
    "EA": (("M", "FC", "CF", "C"), lambda v: v["M"] + (0.5 * v["FC"] + v["CF"] + 1.5 * v["C"])),
    "es": (
        ("FM", "m", "Y", "T", "V", "C'"),
        lambda v: v["FM"] + v["m"] + v["Y"] + v["T"] + v["V"] + v["C'"],
    ),
    "SCS": (
        ("M", "FC", "CF", "C", "FM", "m", "Y", "T", "V", "C'"),
        lambda v: _FORMULAS["EA"][1](v) - _FORMULAS["es"][1](v),
    ),
}


def sras_domains(counts: Mapping[str, int | None]) -> dict[str, tuple[float | None, str | None]]:
    """CPS, ARS, IRS, EA, es and SCS = EA - es from the 22 counts: (value, reason when None).

    A domain whose formula uses a missing count is None, naming the missing counts.
    """
    out: dict[str, tuple[float | None, str | None]] = {}
    for name, (needs, formula) in _FORMULAS.items():
        gone = [n for n in needs if counts.get(n) is None]
        if gone:
            out[name] = (None, "missing count(s): " + ", ".join(gone))
        else:
            out[name] = (float(formula({n: float(counts[n] or 0) for n in needs})), None)
    return out


def mean_or_none(
    values: Sequence[int | float | None], what: str
) -> tuple[float | None, str | None, int]:
    """Mean of the non-missing values with their count, or (None, reason, 0)."""
    got = [float(v) for v in values if v is not None]
    if not got:
        return None, f"no parsed {what}", 0
    return sum(got) / len(got), None, len(got)
