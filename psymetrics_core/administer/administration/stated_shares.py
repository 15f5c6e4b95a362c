"""The strict parser of a verbalized reply: the share of people the model says choose each option.

Used by the ``verbalized`` administration (``verbalized.py``). A reply is read line by line (a
line holding several ``key = share`` pairs separated by ``;`` or ", " is split first); a line that
ends in a number after a separator or before a ``%`` is a share line, ``KEY [:|=|-] NUMBER[%]``
(``The answer is 4`` is prose). Its key must name exactly one of the
item's options: by value (``3``, ``option 3``), by label (``Agree a little``, any case) or by
both (``3 = Agree a little``, ``3. Agree a little``, ``Agree a little (3)``), both naming the same
option. Numbers are percentages, as the prompt asks (``33.3%`` = 0.333, a bare ``20`` = 0.20); a
line keyed ``total`` or ``sum`` is ignored. Other lines are prose and are skipped.

The reply fails to parse, with its reason, when a share line's key names no option or names two,
an option is given twice or not at all, a share is negative or above 100%, or the shares sum
outside ``TOLERANCE`` (90-110%). Within the tolerance the shares are renormalised to sum to 1 and
the stated total is recorded. Nothing is ever realigned: a reply that lists five numbers without
naming their options does not parse. A reply without any share line that reads like a refusal is
``refused``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from psymetrics_core.base.types import Option
from psymetrics_core.pluginsys.defaults.parse import looks_like_refusal

__all__ = ["StatedShares", "TOLERANCE", "parse_stated_shares"]

TOLERANCE = (0.90, 1.10)  # the stated shares' sum (as a fraction) that is renormalised

_SHARE = re.compile(r"(?P<num>[-+−]?\d+(?:\.\d+)?)\s*(?P<pct>%|percent)?$", re.IGNORECASE)
_VALUE_ONLY = re.compile(r"^[(\[]?(?:option\s*)?(?P<value>[-+]?\d{1,18})[)\]]?$")
_LABEL_THEN_VALUE = re.compile(r"^(?P<label>.+?)\s*[(\[]\s*(?P<value>[-+]?\d{1,18})\s*[)\]]$")
_VALUE_THEN_LABEL = re.compile(
    r"^[(\[]?(?:option\s*)?(?P<value>[-+]?\d{1,18})\s*(?:[=:.)\]]+|\s[-–—]|\(|\s)\s*(?P<label>.+)$"
)
_BULLET = re.compile(r"^[-•>]+\s+")
_MARKUP = re.compile(r"[*_`\"“”]")
_IGNORED_KEYS = {"total", "sum", "total percentage", "sum of percentages"}
_KEY_END = " \t:=-–—"
_TAIL = 40  # characters at the end of a piece that may hold its share


@dataclass(frozen=True)
class StatedShares:
    """What one verbalized reply gave: ``shares`` (option value -> share, summing to 1) or
    ``reason`` (why not); ``status`` is ``ok``, ``unparsed`` or ``refused``. ``stated_total``
    is the stated shares' sum as a fraction (1.0 = 100%), before renormalising."""

    shares: dict[int, float] | None
    status: str
    reason: str | None = None
    stated_total: float | None = None

    @property
    def renormalised(self) -> bool:
        """Whether the stated shares did not sum to exactly 100% and were rescaled."""
        return self.stated_total is not None and abs(self.stated_total - 1.0) > 1e-9

    def data(self) -> dict[str, object]:
        """What ``samples.jsonl`` records beside the shares (``data``): the reason, or the
        stated total and whether it was renormalised."""
        if self.shares is None:
            return {"reason": self.reason}
        return {
            "stated_total": round(self.stated_total or 0.0, 6),
            "renormalised": self.renormalised,
        }


class _Failure(Exception):
    """The reply does not parse; the message is the reason."""


def parse_stated_shares(text: str, options: Sequence[Option]) -> StatedShares:
    """Parse ``text`` strictly into a share per option of ``options`` (module docstring)."""
    try:
        found = _share_lines(text, options)
        if not found:
            status = "refused" if looks_like_refusal(text) else "unparsed"
            return StatedShares(None, status, "no 'option = percentage' line in the reply")
        return _checked(found, options)
    except _Failure as exc:
        return StatedShares(None, "unparsed", str(exc))


def _pieces(text: str) -> Iterator[tuple[int, str]]:
    """(line number, piece) for every ``;`` or ", " separated piece of every line, with
    markup (``**``, quotes, braces) and a leading bullet removed."""
    for n, line in enumerate(text.splitlines(), start=1):
        for piece in re.split(r";|,\s+", line):
            piece = _MARKUP.sub("", piece).strip().strip("{}").strip()
            piece = _BULLET.sub("", piece).rstrip(" .,;")
            if piece:
                yield n, piece


def _share_lines(text: str, options: Sequence[Option]) -> list[tuple[int, int, float]]:
    """(line, option value, share as a fraction) of every share line, in reply order."""
    out = []
    seen: dict[int, int] = {}
    for n, piece in _pieces(text):
        cut = max(0, len(piece) - _TAIL)  # a share is short: search its tail only (linear time)
        m = _SHARE.search(piece, cut)
        if m is None:
            continue
        before = piece[: m.start()]
        key = before.rstrip(_KEY_END).strip()
        separated = any(c in before[len(before.rstrip(_KEY_END)) :] for c in ":=-–—")
        if not key or not (separated or m.group("pct")) or _norm(key) in _IGNORED_KEYS:
            continue  # prose ("The answer is 4"), a bare number or the total
        value = _option_of(key, options, n)
        number = float(m.group("num").replace("−", "-"))
        if number < 0:
            raise _Failure(f"line {n}: a negative share ({m.group(0)}) for option {value}")
        if number > 100:
            raise _Failure(f"line {n}: a share above 100% ({m.group(0)}) for option {value}")
        if value in seen:
            raise _Failure(f"option {value} is given twice (lines {seen[value]} and {n})")
        seen[value] = n
        out.append((n, value, number / 100))
    return out


def _norm(text: str) -> str:
    """``text`` lower-cased, spaces collapsed, separators at either end removed."""
    return re.sub(r"\s+", " ", text.lower()).strip(" \t:=.,;")


def _option_of(key: str, options: Sequence[Option], line: int) -> int:
    """The value of the one option ``key`` names (by value, label or both); a failure if none."""
    norm = _norm(key)
    by_label = {_norm(o.label): o.value for o in options}
    values = {o.value for o in options}
    if norm in by_label:
        return by_label[norm]
    for pattern in (_VALUE_ONLY, _LABEL_THEN_VALUE, _VALUE_THEN_LABEL):
        m = pattern.match(norm)
        if m is None:
            continue
        value = int(m.group("value"))
        label = _norm((m.groupdict().get("label") or "").strip(" ()[]"))
        if value not in values:
            raise _Failure(f"line {line}: '{key[:60]}' names no option (value {value} is not one)")
        if label and by_label.get(label, value) != value:
            raise _Failure(
                f"line {line}: '{key[:60]}' names two options (value {value} and label "
                f"'{label}' of option {by_label[label]})"
            )
        if label and label not in by_label:
            raise _Failure(f"line {line}: '{key[:60]}' names no option ('{label}' is no label)")
        return value
    raise _Failure(f"line {line}: '{key[:60]}' names no option")


def _checked(found: list[tuple[int, int, float]], options: Sequence[Option]) -> StatedShares:
    """The shares of ``found`` once every option is named once and the sum is within the
    tolerance (renormalised to 1)."""
    shares = {value: share for _, value, share in found}  # each option once (_share_lines)
    missing = [o for o in options if o.value not in shares]
    if missing:
        named = ", ".join(f"{o.value} ({o.label})" for o in missing)
        raise _Failure(f"no share for option(s) {named}")
    total = math.fsum(shares.values())
    lo, hi = TOLERANCE
    if not lo <= total <= hi:
        hint = " (fractions? the prompt asks for percentages)" if 0.9 <= total * 100 <= 1.1 else ""
        raise _Failure(
            f"the shares sum to {total * 100:g}%, outside {lo * 100:g}-{hi * 100:g}%{hint}"
        )
    if abs(total - 1.0) <= 1e-9:  # 100% as stated (up to float rounding): nothing rescaled
        return StatedShares({o.value: shares[o.value] for o in options}, "ok", None, 1.0)
    ordered = {o.value: shares[o.value] / total for o in options}
    return StatedShares(ordered, "ok", None, total)
