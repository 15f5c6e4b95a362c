"""Validity indicators of one administration: warnings that a table of scores may mislead.

Computed for every questionnaire cell by the default ``aggregate`` and recorded in
``results.json`` at ``tasks.<task>.indicators`` (and per run in ``tasks.<task>.runs``). Each
indicator is ``{value, threshold, fired, n, detail}``; ``value`` is ``null`` with a ``reason``
when it cannot be computed (too few answers, no reverse-keyed items, not measured).

Indicators and thresholds (fixed, documented here and in the README):

- ``straight_lining``: share of answered items given the single most frequent answer code
  (modal share). Fires at >= 0.80 with at least 5 answered items. A respondent who answers
  "1" to 43 of 44 BFI items has 0.98; careless-responding screens flag long identical strings
  the same way (Meade and Craig, 2012; Curran, 2016).
- ``acquiescence``: mean of (answer - midpoint) / half-range over answered items, in [-1, 1];
  +1 agrees with everything, -1 disagrees with everything (Paulhus, 1991). The sign follows
  the response scale's ``agree`` end: on a scale whose low codes mean agreement
  (``agree: low``, e.g. 16p's 1 = Agree) the term is negated. Fires at |value| >= 0.50.
- ``reverse_keyed_inconsistency``: for every scale with answered forward- and reverse-keyed
  items, |mean keyed forward - mean keyed reverse| / scale range, averaged over those scales.
  0 = the reverse-keyed items tell the same story as the forward ones; 1 = they contradict it
  fully (agreeing with a statement and with its opposite). Fires at >= 0.50.
- ``parse_rate``: answered (parsed) / administered items; a verbalized item counts when its
  stated shares parsed. Fires below 0.90.
- ``judge_parse_rate``: parsed judge verdicts / judge calls (judged tasks only). Fires below
  0.90.
- ``option_order_sensitivity`` (only when a run crossed the default option order with a
  permuted or reversed one): mean |score difference| between the default-order cells and the
  other option-order cells, over scales, divided by the response range. Fires at >= 0.15.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "THRESHOLDS",
    "AnswerRow",
    "questionnaire_indicators",
    "judge_parse_rate",
    "option_order_sensitivity",
    "warnings_of",
    "add_run_indicators",
    "degenerate_sentence",
    "n_scored",
    "SHORT_NAMES",
]

MIN_ANSWERS = 5

THRESHOLDS: dict[str, dict[str, Any]] = {
    "straight_lining": {"op": ">=", "value": 0.80, "what": "modal share of answers"},
    "acquiescence": {"op": "|x|>=", "value": 0.50, "what": "net agreement, -1..1"},
    "reverse_keyed_inconsistency": {
        "op": ">=",
        "value": 0.50,
        "what": "forward vs reverse-keyed gap / range",
    },
    "parse_rate": {"op": "<", "value": 0.90, "what": "answered / administered"},
    "judge_parse_rate": {"op": "<", "value": 0.90, "what": "parsed verdicts / judge calls"},
    "option_order_sensitivity": {
        "op": ">=",
        "value": 0.15,
        "what": "mean |score change| / range across option orders",
    },
}


@dataclass(frozen=True)
class AnswerRow:
    """One administered item as the indicators need it (raw answer, keying, range, status)."""

    answer: float | None
    status: str
    reverse: bool
    scales: tuple[str, ...]
    lo: float
    hi: float
    scored: bool = True
    agree_low: bool = False  # the response scale's low end means agreement (spec ``agree: low``)


def _indicator(name: str, value: float | None, n: int, reason: str | None = None, **detail: Any):
    th = THRESHOLDS[name]
    fired = False
    if value is not None:
        t = th["value"]
        op = th["op"]
        fired = value >= t if op == ">=" else abs(value) >= t if op == "|x|>=" else value < t  # "<"
    out: dict[str, Any] = {
        "value": None if value is None else round(float(value), 4),
        "threshold": f"{th['op']} {th['value']}".replace("|x|>=", "|value| >="),
        "fired": bool(fired),
        "n": n,
    }
    if reason:
        out["reason"] = reason
    if detail:
        out["detail"] = detail
    return out


def questionnaire_indicators(rows: Sequence[AnswerRow]) -> dict[str, dict[str, Any]]:
    """Straight-lining, acquiescence, reverse-keyed inconsistency and parse rate of one cell.

    ``rows`` are in presented order; attention checks and fillers (``scored`` False) count
    towards the parse rate only.
    """
    n = len(rows)
    ok = [r for r in rows if r.status == "ok"]  # parsed (a verbalized item: its shares, no answer)
    out: dict[str, dict[str, Any]] = {}
    out["parse_rate"] = _indicator(
        "parse_rate",
        (len(ok) / n) if n else None,
        n,
        None if n else "no items administered",
        answered=len(ok),
    )
    scored = [r for r in ok if r.scored and r.answer is not None]
    k = len(scored)
    if k < MIN_ANSWERS:
        why = f"needs {MIN_ANSWERS}+ answered items (has {k})"
        out["straight_lining"] = _indicator("straight_lining", None, k, why)
        out["acquiescence"] = _indicator("acquiescence", None, k, why)
    else:
        values = [float(r.answer) for r in scored]  # type: ignore[arg-type]
        counts: dict[float, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        mode_value, mode_n = max(counts.items(), key=lambda kv: (kv[1], -kv[0]))
        longest = run = 1
        for a, b in zip(values[:-1], values[1:], strict=True):
            run = run + 1 if a == b else 1
            longest = max(longest, run)
        out["straight_lining"] = _indicator(
            "straight_lining",
            mode_n / k,
            k,
            modal_answer=_num(mode_value),
            modal_count=mode_n,
            longest_run=longest,
        )
        acq = [
            (-1 if r.agree_low else 1) * (v - (r.lo + r.hi) / 2) / ((r.hi - r.lo) / 2)
            for v, r in zip(values, scored, strict=True)
        ]
        out["acquiescence"] = _indicator("acquiescence", sum(acq) / k, k)
    out["reverse_keyed_inconsistency"] = _reverse_inconsistency(scored)
    return out


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x


def _reverse_inconsistency(scored: Sequence[AnswerRow]) -> dict[str, Any]:
    per: dict[str, float] = {}
    n = 0
    for scale in sorted({s for r in scored for s in r.scales}):
        fwd = [r for r in scored if scale in r.scales and not r.reverse]
        rev = [r for r in scored if scale in r.scales and r.reverse]
        if not fwd or not rev:
            continue

        def keyed(r: AnswerRow) -> float:
            a = float(r.answer)  # type: ignore[arg-type]
            return r.lo + r.hi - a if r.reverse else a

        span = max(r.hi - r.lo for r in fwd + rev)
        gap = abs(sum(map(keyed, fwd)) / len(fwd) - sum(map(keyed, rev)) / len(rev))
        per[scale] = round(gap / span, 4) if span else 0.0
        n += len(fwd) + len(rev)
    if not per:
        return _indicator(
            "reverse_keyed_inconsistency",
            None,
            0,
            "no scale has both forward- and reverse-keyed answered items",
        )
    return _indicator("reverse_keyed_inconsistency", sum(per.values()) / len(per), n, per_scale=per)


def judge_parse_rate(n_parsed: int, n_calls: int) -> dict[str, Any]:
    """Parsed judge verdicts / judge calls; ``null`` with a reason when there were no calls."""
    if n_calls == 0:
        return _indicator("judge_parse_rate", None, 0, "no judge calls")
    return _indicator("judge_parse_rate", n_parsed / n_calls, n_calls, parsed=n_parsed)


def option_order_sensitivity(
    runs: Iterable[Mapping[str, Any]], span: float | None
) -> dict[str, Any] | None:
    """Score change between default and other option orders, over ``runs`` of one task.

    ``runs`` are the per-(condition, repeat) summaries (``facets``, ``scales.<s>.score``);
    ``span`` is the response range (max - min). None when the run did not vary option order.
    """
    default: dict[str, list[float]] = {}
    other: dict[str, list[float]] = {}
    varied = False
    for r in runs:
        level = (r.get("facets") or {}).get("option_order", "default")
        varied = varied or level != "default"
        target = default if level == "default" else other
        for scale, s in (r.get("scales") or {}).items():
            if s.get("score") is not None:
                target.setdefault(scale, []).append(float(s["score"]))
    if not varied:
        return None
    diffs = {
        s: abs(sum(other[s]) / len(other[s]) - sum(default[s]) / len(default[s]))
        for s in sorted(set(default) & set(other))
    }
    if not diffs or not span:
        why = "no scale scored under both the default and another option order"
        return _indicator("option_order_sensitivity", None, 0, why if span else "unknown range")
    value = sum(diffs.values()) / len(diffs) / span
    return _indicator(
        "option_order_sensitivity",
        value,
        len(diffs),
        per_scale={k: round(v, 4) for k, v in diffs.items()},
    )


_MESSAGES = {
    "straight_lining": "{pct:.0f}% of answers are the same code ({modal}); scale scores then "
    "mostly reflect reverse keying, not the model",
    "acquiescence": "net {side} of {v:+.2f} across items (yea/nay-saying)",
    "reverse_keyed_inconsistency": "reverse-keyed items contradict forward-keyed ones "
    "({v:.2f} of the range)",
    "parse_rate": "only {pct:.0f}% of items parsed",
    "judge_parse_rate": "only {pct:.0f}% of judge verdicts parsed",
    "option_order_sensitivity": "scores move {v:.2f} of the range when options are reordered",
}


SHORT_NAMES = {
    "straight_lining": "straight-lining",
    "acquiescence": "acquiescence",
    "reverse_keyed_inconsistency": "reverse-key gap",
    "parse_rate": "parse rate",
    "judge_parse_rate": "judge parse rate",
    "option_order_sensitivity": "option-order shift",
}  # column headers of the indicators on every screen


def degenerate_sentence(
    task: str,
    where: str = "the validity indicators below",
    *,
    n_answered: int | None = None,
    n_scored: int | None = None,
) -> str:
    """What every screen says beside scores whose answer pattern a validity indicator flagged
    (the terminal, the report): one wording, one home. With ``n_answered`` 0 no answer parsed,
    with ``n_scored`` 0 no score could be computed (e.g. no judge verdict parsed): there is no
    pattern to describe and every score is undefined, and it says so."""
    if n_answered == 0:
        return (
            f"{task}: no answer parsed (see {where}): there is no answer pattern to describe "
            "and every score is undefined"
        )
    if n_scored == 0:
        return (
            f"{task}: no score could be computed from the answers (see the notes above and "
            f"{where}): there is no scored pattern to describe"
        )
    return (
        f"{task}: the answer pattern is degenerate (see {where}): these scores describe that "
        "pattern, not a personality"
    )


def n_scored(entry: Mapping[str, Any]) -> int:
    """How many of a task entry's scales have a score (``degenerate_sentence``'s ``n_scored``)."""
    return sum(1 for s in (entry.get("scales") or {}).values() if s.get("score") is not None)


def warnings_of(indicators: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One human-readable line per fired indicator, in a fixed order."""
    out = []
    for name in THRESHOLDS:
        ind = indicators.get(name)
        if not ind or not ind.get("fired"):
            continue
        v = float(ind["value"])
        detail = ind.get("detail") or {}
        text = _MESSAGES[name].format(
            v=v,
            pct=100 * v,
            modal=detail.get("modal_answer"),
            side="agreement" if v > 0 else "disagreement",
        )
        out.append(f"{name.replace('_', '-')}: {text} (threshold {ind['threshold']})")
    return out


def add_run_indicators(entry: dict[str, Any], instrument: Any) -> None:
    """Indicators across a task's (condition, repeat) runs, added to its ``indicators``.

    Today: option-order sensitivity, when the runs varied the option order (questionnaires).
    """
    scales = getattr(instrument, "response_scales", None) or {}
    spans = [rs.max - rs.min for rs in scales.values()]
    if not spans or "indicators" not in entry:
        return
    ind = option_order_sensitivity(entry.get("runs") or [], float(max(spans)))
    if ind is not None:
        entry["indicators"] = {**entry["indicators"], "option_order_sensitivity": ind}
