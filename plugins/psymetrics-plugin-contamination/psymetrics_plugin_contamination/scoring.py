"""From answered probe prompts to per-item records (pure: no model calls).

A record holds what one prompt contributes to its probe's metric: an edit distance, a match, a
predicted dimension, an absolute error, or a log-likelihood.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .inventory import Inventory
from .metrics import edit_distance, option_errors
from .options import ProbeOptions
from .parsing import (
    INVALID,
    normalize_keyword,
    parse_dimension,
    parse_keyword,
    parse_option,
    parse_scores,
    parse_verbatim,
)
from .prompts import ProbePrompt

__all__ = ["Answered", "Record", "score_prompt", "truncated"]


@dataclass(frozen=True)
class Answered:
    """A probe prompt with the model's completion text or log-likelihood."""

    prompt: ProbePrompt
    text: str | None = None
    loglik: float | None = None
    truncated: bool | None = None  # the answer hit max_new_tokens (None: backend did not say)


@dataclass(frozen=True)
class Record:
    """One prompt's contribution. ``num``/``den`` feed ratio metrics (None: dropped);
    ``gold``/``pred`` feed macro-F1; ``status`` is ok/refused/empty/invalid."""

    probe: str
    unit: str
    condition: str
    status: str
    parsed: Any
    num: float | None = None
    den: float | None = None
    gold: Any = None
    pred: Any = None
    extra: dict[str, Any] | None = None
    truncated: bool | None = None

    def to_json(self) -> dict[str, Any]:
        """The fields kept in ``samples.jsonl``."""
        return {
            "status": self.status,
            "parsed": self.parsed,
            "num": self.num,
            "den": self.den,
            "pred": self.pred,
            "truncated": self.truncated,
            **(self.extra or {}),
        }


def _verbatim(a: Answered, opts: ProbeOptions) -> Record:
    p = a.prompt
    parsed = parse_verbatim(a.text, opts.verbatim_clean)
    out = parsed.value or ""
    ed = edit_distance(str(p.gold), out)
    name = str(p.meta.get("inventory_name") or "")
    bare = out.replace(name, "").strip() if name else out
    return Record(
        p.probe,
        p.unit,
        p.condition,
        parsed.status,
        out,
        float(ed),
        float(len(p.gold)),
        extra={"exact": out == p.gold, "ed_name_removed": float(edit_distance(str(p.gold), bare))},
    )


def _keyword(a: Answered, opts: ProbeOptions) -> Record:
    p = a.prompt
    parsed = parse_keyword(a.text)
    gold = str(p.gold)
    masked = p.meta.get("masked")
    if parsed.status != "ok":
        keep = opts.keyword_unparsed == "wrong"
        return Record(
            p.probe,
            p.unit,
            p.condition,
            parsed.status,
            None,
            0.0 if keep else None,
            1.0 if keep else None,
            gold=gold,
            extra={
                "strict": False if keep else None,
                "normalized": False if keep else None,
                "masked": masked,
            },
        )
    strict = parsed.value == gold
    norm = normalize_keyword(parsed.value) == normalize_keyword(gold)
    hit = norm if opts.keyword_headline == "normalized" else strict
    return Record(
        p.probe,
        p.unit,
        p.condition,
        "ok",
        parsed.value,
        float(hit),
        1.0,
        gold=gold,
        extra={"strict": strict, "normalized": norm, "masked": masked},
    )


def _dimension(a: Answered, inv: Inventory) -> Record:
    p = a.prompt
    labels = list(inv.dimensions)
    parsed = parse_dimension(a.text, labels, [inv.scale_of_label[x] for x in labels])
    pred = parsed.value if parsed.status == "ok" else INVALID
    return Record(
        p.probe,
        p.unit,
        p.condition,
        parsed.status,
        parsed.value,
        float(pred == p.gold),
        1.0,
        gold=p.gold,
        pred=pred,
    )


def _option_score(a: Answered, inv: Inventory, opts: ProbeOptions) -> Record:
    p = a.prompt
    item = next(it for it in inv.items if it.id == p.unit)
    parsed = parse_scores(a.text)
    gold = [float(g) for g in p.gold]
    lo, hi = item.keyed_range
    status = parsed.status
    if status == "ok" and len(parsed.value) != len(gold):
        status = "invalid"
    errs = option_errors(gold, parsed.value, lo, hi, opts.option_score_unparsed)
    num, den = (None, None) if errs is None else (float(errs[0]), float(errs[1]))
    return Record(
        p.probe,
        p.unit,
        p.condition,
        status,
        parsed.value,
        num,
        den,
        gold=gold,
        extra={"n_numbers": len(parsed.value or [])},
    )


def _target(a: Answered, inv: Inventory, opts: ProbeOptions) -> Record:
    p = a.prompt
    item = next(it for it in inv.items if it.id == p.unit)
    parsed = parse_option(a.text, [o.label for o in item.options], opts.target_numeric)
    t = float(p.gold)
    if parsed.status == "ok":
        chosen = item.options[parsed.value]
        return Record(
            p.probe,
            p.unit,
            p.condition,
            "ok",
            chosen.label,
            abs(t - chosen.keyed),
            1.0,
            gold=t,
            pred=chosen.keyed,
        )
    if opts.target_unparsed == "drop":
        return Record(p.probe, p.unit, p.condition, parsed.status, None, gold=t)
    lo, hi = item.keyed_range
    return Record(
        p.probe, p.unit, p.condition, parsed.status, None, max(t - lo, hi - t), 1.0, gold=t
    )


def _order(a: Answered) -> Record:
    p = a.prompt
    if a.loglik is None or a.loglik != a.loglik:  # None or NaN
        return Record(p.probe, p.unit, p.condition, "invalid", None)
    return Record(
        p.probe, p.unit, p.condition, "ok", a.loglik, extra={"control": p.meta.get("control")}
    )


def truncated(meta: Mapping[str, Any]) -> bool | None:
    """Whether a completion stopped at its token budget: the backend's ``finish_reason``
    ("length" in the OpenAI API and the local transformers backend); None when the backend
    gives none (lm-eval's bridge)."""
    reason = meta.get("finish_reason")
    return None if not isinstance(reason, str) else reason == "length"


def score_prompt(a: Answered, inv: Inventory, opts: ProbeOptions) -> Record:
    """The record of one answered prompt, marked ``truncated`` when it hit its budget."""
    rec = _score(a, inv, opts)
    return rec if a.truncated is None else replace(rec, truncated=a.truncated)


def _score(a: Answered, inv: Inventory, opts: ProbeOptions) -> Record:
    probe = a.prompt.probe
    if probe == "verbatim":
        return _verbatim(a, opts)
    if probe == "keyword":
        return _keyword(a, opts)
    if probe == "item-dimension":
        return _dimension(a, inv)
    if probe == "option-score":
        return _option_score(a, inv, opts)
    if probe == "target-score":
        return _target(a, inv, opts)
    if probe == "order":
        return _order(a)
    raise ValueError(f"unknown probe {probe!r}")


def records_by_unit(records: Sequence[Record]) -> dict[str, list[Record]]:
    """Records grouped by unit (item id), in first-seen order."""
    out: dict[str, list[Record]] = {}
    for r in records:
        out.setdefault(r.unit, []).append(r)
    return out
