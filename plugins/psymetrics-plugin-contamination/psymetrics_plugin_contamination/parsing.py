"""Pure answer parsers of the five probes (no model calls).

Han et al. (2025) give no parsing rules beyond the prompts' instructions; these follow the
reimplementation notes (exact match before longest match, word boundaries so that "agree" is
never found inside "disagree", ``<think>`` blocks removed). Every result carries a status:
``ok``, ``refused``, ``empty`` or ``invalid``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Parsed",
    "strip_think",
    "looks_refused",
    "parse_verbatim",
    "parse_keyword",
    "normalize_keyword",
    "parse_dimension",
    "dimension_aliases",
    "parse_scores",
    "parse_option",
]

INVALID = "INVALID"

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_REFUSAL = re.compile(
    r"\b(i'?m sorry|i am sorry|i can(?:no|')t|i cannot|i am unable|i'?m unable|unable to provide|"
    r"cannot provide|can't provide|copyright(?:ed)?|as an ai)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Parsed:
    """A parsed answer: ``value`` (None unless ``status`` is ok) and a short ``detail``."""

    value: Any
    status: str  # "ok", "refused", "empty", "invalid"
    detail: str = ""


def strip_think(text: str | None) -> str:
    """``text`` without reasoning blocks (``<think>...</think>``), stripped."""
    return _THINK.sub("", text or "").strip()


def looks_refused(text: str) -> bool:
    """Heuristic refusal detector ("I'm sorry", "copyright", ...): a diagnostic only."""
    return bool(_REFUSAL.search(text))


def _status_for_failure(text: str) -> str:
    if not text:
        return "empty"
    return "refused" if looks_refused(text) else "invalid"


def parse_verbatim(text: str | None, clean: str = "none") -> Parsed:
    """The whole answer, stripped; refusals are kept (scored as they are, as in the paper).

    ``clean="quotes_numbering"`` also removes surrounding quotes and a leading "1." or "1)".
    """
    out = strip_think(text)
    if clean == "quotes_numbering":
        out = re.sub(r"^\s*\d+\s*[.):]\s*", "", out)
        out = out.strip().strip("\"'“”‘’").strip()
    status = "ok" if out else "empty"
    if out and looks_refused(out):
        status = "refused"
    return Parsed(out, status)


_EDGE_PUNCT = "\"'“”‘’`.,;:!?()[]{}*_"


def parse_keyword(text: str | None) -> Parsed:
    """First non-empty line without surrounding quotes, brackets and trailing punctuation."""
    body = strip_think(text)
    line = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    word = line.strip(_EDGE_PUNCT).strip()
    if not word:
        return Parsed(None, _status_for_failure(body))
    return Parsed(word, "ok")


def normalize_keyword(word: str) -> str:
    """Casefolded, with every non-alphanumeric character removed."""
    return re.sub(r"[^0-9a-z]", "", word.casefold())


def _squash(text: str) -> str:
    return re.sub(r"[\s/\-_]+", "", text.casefold()).strip(_EDGE_PUNCT)


def dimension_aliases(label: str, scale_id: str | None = None) -> list[str]:
    """Strings accepted for ``label``: itself, "B/A" for "A/B", each part of a slash pair, the
    label without a trailing "(...)", and the scale id with spaces."""
    out = [label]
    if "/" in label:
        parts = [p.strip() for p in label.split("/")]
        out += ["/".join(reversed(parts)), *parts]
    if scale_id:
        out.append(scale_id.replace("_", " "))
        out.append(scale_id.replace("_", "-"))
    return [
        a for i, a in enumerate(out) if a and a.casefold() not in {x.casefold() for x in out[:i]}
    ]


def _occurs(alias: str, text: str) -> list[tuple[int, int]]:
    pat = re.compile(
        r"(?<![0-9a-z])" + re.escape(alias.casefold()) + r"(?![0-9a-z])", re.IGNORECASE
    )
    return [(m.start(), m.end()) for m in pat.finditer(text.casefold())]


def _outermost(spans: list[tuple[int, int, Any]]) -> set[Any]:
    """Tags of the spans not lying inside a longer span (so "like me" inside "not like me" and
    "Care" inside "Care/harm" do not count)."""
    return {
        tag
        for s, e, tag in spans
        if not any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, _ in spans)
    }


def parse_dimension(text: str | None, labels: Sequence[str], scale_ids: Sequence[str]) -> Parsed:
    """Map an answer to one of ``labels`` or ``INVALID``.

    (1) exact after casefold/strip; (2) equal once spaces, "/", "-" and "_" are removed;
    (3) the single label one of whose aliases occurs as a whole word, where an occurrence
    inside a longer matched alias does not count; else ``INVALID`` (status invalid/refused/
    empty). ``scale_ids`` are aligned with ``labels``.
    """
    body = strip_think(text)
    first = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    cleaned = first.strip(_EDGE_PUNCT).strip()
    for label in labels:
        if cleaned.casefold() == label.casefold():
            return Parsed(label, "ok", "exact")
    for label, sid in zip(labels, scale_ids, strict=True):
        if any(_squash(cleaned) == _squash(a) for a in dimension_aliases(label, sid)):
            return Parsed(label, "ok", "normalised")
    spans: list[tuple[int, int, str]] = []
    for label, sid in zip(labels, scale_ids, strict=True):
        for alias in dimension_aliases(label, sid):
            spans += [(s, e, label) for s, e in _occurs(alias, body)]
    kept = _outermost(spans)
    if len(kept) == 1:
        return Parsed(kept.pop(), "ok", "contained")
    if len(kept) > 1:
        return Parsed(INVALID, "invalid", "several dimensions named")
    return Parsed(INVALID, _status_for_failure(body))


def parse_scores(text: str | None) -> Parsed:
    """Every number in the answer, in order (commas and other separators are accepted)."""
    body = strip_think(text)
    nums = [float(x) for x in _NUMBER.findall(body)]
    if not nums:
        return Parsed(None, _status_for_failure(body))
    return Parsed(nums, "ok")


def parse_option(text: str | None, labels: Sequence[str], numeric: bool = False) -> Parsed:
    """The index of the option label an answer names, or None.

    (1) exact label after casefold with whitespace and punctuation stripped; (2) the one label
    contained as whole words outside any longer contained label (several: invalid); (3) only with
    ``numeric``: a bare integer k in 1..R is the k-th option.
    """
    body = strip_think(text)
    first = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    squashed = re.sub(r"[^0-9a-z]+", " ", first.casefold()).strip()
    for i, label in enumerate(labels):
        if squashed == re.sub(r"[^0-9a-z]+", " ", label.casefold()).strip():
            return Parsed(i, "ok", "exact")
    kept = _outermost([(s, e, i) for i, lab in enumerate(labels) for s, e in _occurs(lab, body)])
    if len(kept) == 1:
        return Parsed(kept.pop(), "ok", "contained")
    if len(kept) > 1:
        return Parsed(None, "invalid", "several options named")
    if numeric and re.fullmatch(r"\d+", first.strip(_EDGE_PUNCT)):
        k = int(first.strip(_EDGE_PUNCT))
        if 1 <= k <= len(labels):
            return Parsed(k - 1, "ok", "numeric")
    return Parsed(None, _status_for_failure(body))
