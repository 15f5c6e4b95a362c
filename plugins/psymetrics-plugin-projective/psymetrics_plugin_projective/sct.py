"""Sentence-completion stems: the shipped English bank (CC0), user files, per-session sampling.

A user file (``--items sct=FILE`` or the task option ``stems=FILE``) is either

- the JSON stem bank of Wang et al. (2026) (top-level ``SCT_WB_C`` -> ``dimensions`` ->
  ``secondary_constructs`` -> ``items``; stem ids ``<construct>_<NN>`` numbered within each
  sub-construct, scoring domain from the sub-construct as in the authors' code), or
- a CSV with the columns ``id``, ``domain`` (FA, CA, SA, IR, ER) and ``stem``; a CSV without
  ``domain`` takes it from an id of the form ``<construct>_<NN>`` (e.g. ``1.4_09`` -> IR).

Errors name the file and line and what was expected.
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from psymetrics_core.api import PsymError

__all__ = [
    "Stem",
    "DOMAINS",
    "CONSTRUCT_DOMAIN",
    "builtin_stems",
    "read_stem_file",
    "sample_stems",
    "is_chinese",
]

DOMAINS = ("FA", "CA", "SA", "IR", "ER")
DOMAIN_NAMES = {
    "FA": "Family Adjustment",
    "CA": "Career Adjustment",
    "SA": "Self-Attitudes",
    "IR": "Interpersonal Relationships",
    "ER": "Emotion Regulation",
}
# sub-construct -> scoring domain (Wang et al. 2026 code release, SCT_SUBCONSTRUCT_TO_DOMAIN)
CONSTRUCT_DOMAIN = {
    "1.1": "FA",
    "1.2": "FA",
    "1.3": "FA",
    "1.4": "IR",
    "2.1": "SA",
    "2.2": "CA",
    "2.3": "SA",
    "2.4": "CA",
    "3.1": "SA",
    "3.2": "SA",
    "3.3": "ER",
    "4.1": "CA",
    "4.2": "ER",
    "4.3": "CA",
}
_NUMBERED = re.compile(r"^\s*\d+\s*[.．、]\s*")


@dataclass(frozen=True)
class Stem:
    """One sentence stem with its scoring domain."""

    id: str
    domain: str
    text: str


@lru_cache(maxsize=1)
def builtin_stems() -> tuple[Stem, ...]:
    """The 40 English stems shipped with the plugin (8 per domain, CC0)."""
    from importlib import resources

    raw = (resources.files(__package__) / "data" / "sct_stems.yaml").read_text(encoding="utf-8")
    rows = yaml.safe_load(raw)["stems"]
    return tuple(Stem(r["id"], r["domain"], r["stem"]) for r in rows)


def is_chinese(stems: Sequence[Stem]) -> bool:
    """Whether most stems are written in Chinese (picks the administration prompt)."""
    han = sum(1 for s in stems if re.search(r"[\u4e00-\u9fff]", s.text))
    return han * 2 > len(stems)


def read_stem_file(path: str | Path) -> list[Stem]:
    """Stems from a GenPT JSON bank or an ``id,domain,stem`` CSV (see the module docstring)."""
    p = Path(path)
    if not p.is_file():
        raise PsymError(f"{p}: no such stem file (expected the GenPT JSON bank or a CSV)")
    try:
        raw = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PsymError(f"{p}: not UTF-8 text ({exc.reason})") from None
    stems = _read_csv(p, raw) if p.suffix.lower() == ".csv" else _read_json(p, raw)
    if not stems:
        raise PsymError(f"{p}: holds no stems")
    seen: dict[str, int] = {}
    for i, s in enumerate(stems):
        if s.id in seen:
            raise PsymError(f"{p}, line {_line_of(raw, s.id)}: duplicate stem id {s.id!r}")
        seen[s.id] = i
    return stems


def _read_csv(p: Path, raw: str) -> list[Stem]:
    reader = csv.DictReader(io.StringIO(raw))
    cols = set(reader.fieldnames or [])
    if not {"id", "stem"} <= cols:
        raise PsymError(
            f"{p}, line 1: expected the columns id, domain, stem (got {', '.join(sorted(cols))})"
        )
    out = []
    for row in reader:
        line = reader.line_num
        sid, text = (row.get("id") or "").strip(), (row.get("stem") or "").strip()
        if not sid or not text:
            raise PsymError(f"{p}, line {line}: 'id' and 'stem' must not be empty")
        domain = (row.get("domain") or "").strip().upper() or _construct_domain(sid)
        if domain not in DOMAINS:
            raise PsymError(
                f"{p}, line {line}: domain {domain or '(empty)'!r} of stem {sid!r} is not one "
                f"of {', '.join(DOMAINS)}"
            )
        out.append(Stem(sid, domain, text))
    return out


def _construct_domain(stem_id: str) -> str:
    return CONSTRUCT_DOMAIN.get(stem_id.rpartition("_")[0], "")


def _read_json(p: Path, raw: str) -> list[Stem]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise PsymError(f"{p}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
    bank: Any = data.get("SCT_WB_C", data) if isinstance(data, dict) else None
    dims = bank.get("dimensions") if isinstance(bank, dict) else None
    if not isinstance(dims, list):
        raise PsymError(
            f"{p}, line 1: expected the GenPT stem bank (an object with 'SCT_WB_C' -> "
            "'dimensions': [...]), or use a CSV with id, domain, stem"
        )
    out = []
    for dim in dims:
        constructs = dim.get("secondary_constructs") if isinstance(dim, dict) else None
        if not isinstance(constructs, list):
            where = _line_of(raw, str(dim.get("dimension_id", "")) if isinstance(dim, dict) else "")
            raise PsymError(f"{p}, line {where}: a dimension needs 'secondary_constructs': [...]")
        for con in constructs:
            cid = str(con.get("construct_id", "")) if isinstance(con, dict) else ""
            where = _line_of(raw, f'"construct_id": "{cid}"') if cid else 1
            domain = CONSTRUCT_DOMAIN.get(cid)
            if domain is None:
                raise PsymError(
                    f"{p}, line {where}: construct_id {cid or '(missing)'!r} has no scoring "
                    f"domain (known: {', '.join(CONSTRUCT_DOMAIN)})"
                )
            items = con.get("items")
            if not isinstance(items, list) or not items:
                raise PsymError(f"{p}, line {where}: construct {cid} needs a non-empty 'items'")
            for n, item in enumerate(items, start=1):
                if not isinstance(item, str) or not _NUMBERED.sub("", item).strip():
                    raise PsymError(
                        f"{p}, line {_line_of(raw, json.dumps(item, ensure_ascii=False))}: "
                        f"item {n} of construct {cid} must be a non-empty string"
                    )
                out.append(Stem(f"{cid}_{n:02d}", domain, _NUMBERED.sub("", item).strip()))
    return out


def _line_of(raw: str, needle: str) -> int:
    """1-based line of the first occurrence of ``needle`` in ``raw`` (1 when absent)."""
    at = raw.find(needle) if needle else -1
    return raw.count("\n", 0, at) + 1 if at >= 0 else 1


def sample_stems(stems: Sequence[Stem], seed: int, per_domain: int = 4) -> list[Stem]:
    """``per_domain`` stems from each domain, domains in sorted order (the authors' sampler).

    ``random.Random(seed)`` draws ``rng.sample(domain_stems, k)`` for CA, ER, FA, IR, SA in
    turn, the stems of a domain kept in bank order; a domain with fewer stems gives all.
    """
    rng = random.Random(seed)
    out: list[Stem] = []
    for domain in sorted({s.domain for s in stems}):
        pool = [s for s in stems if s.domain == domain]
        out += rng.sample(pool, min(per_domain, len(pool)))
    return out
