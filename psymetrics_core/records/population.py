"""Population files: simulated respondents, one JSON line each (``psym population build``).

A line is ``{"id", "persona", "labels", "source": {"file", "sha256", "row"}, "licence"}``:
the respondent id (the source's own ``id`` where it has one), the persona text, every other field
of the source row as labels (the criteria of criterion validity), where the row came from, and
the licence the user declared for the source. ``read_population`` reads such a file back with
the bounded readers, checking every field; ``population_line`` is the one way a line is written
(sorted keys, no spaces that vary), so the same population gives the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import parse_json, read_lines

__all__ = [
    "Respondent",
    "read_population",
    "population_line",
    "id_problem",
    "MAX_RESPONDENTS",
    "MAX_PERSONA",
    "MAX_LABELS",
]

MAX_RESPONDENTS = 100_000  # respondents in one population file
MAX_PERSONA = 20_000  # characters of one persona text
MAX_ID = 200  # characters of a respondent id
MAX_LABELS = 200  # labels per respondent


@dataclass(frozen=True)
class Respondent:
    """One simulated respondent of a population."""

    id: str
    persona: str
    labels: dict[str, Any] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)
    licence: str = ""


def population_line(r: Respondent) -> str:
    """The JSON line of ``r`` in a population file (deterministic bytes)."""
    record = {
        "id": r.id,
        "persona": r.persona,
        "labels": r.labels,
        "source": r.source,
        "licence": r.licence,
    }
    return json.dumps(record, ensure_ascii=False, sort_keys=True, allow_nan=False)


def read_population(path: str | Path) -> list[Respondent]:
    """The respondents of the population file ``path``; a malformed line is one ``PsymError``
    naming the file, line and field."""
    p = Path(path)
    if not p.is_file():
        raise PsymError(f"{p}: no such population file (write one with `psym population build`)")
    out: list[Respondent] = []
    seen: set[str] = set()
    for n, line in read_lines(p, what="population file"):
        if not line.strip():
            continue
        if len(out) >= MAX_RESPONDENTS:
            raise PsymError(f"{p}, line {n}: more than {MAX_RESPONDENTS:,} respondents")
        r = _respondent(parse_json(line, p, line=n), p, n)
        if r.id in seen:
            raise PsymError(f"{p}, line {n}: field 'id': respondent {r.id!r} appears twice")
        seen.add(r.id)
        out.append(r)
    if not out:
        raise PsymError(f"{p}: the population file has no respondents")
    return out


def id_problem(rid: Any) -> str | None:
    """What is wrong with ``rid`` as a respondent id, or None: the one rule of population files
    (``read_population`` and ``psym population build`` both apply it)."""
    if not isinstance(rid, str) or not rid.strip() or len(rid) > MAX_ID:
        return f"expected a non-empty string of <= {MAX_ID} chars"
    if any(c in rid for c in "\n\r\t/\\"):
        return "no line breaks, tabs or path separators"
    return None


def _respondent(raw: Any, p: Path, n: int) -> Respondent:
    where = f"{p}, line {n}"
    if not isinstance(raw, dict):
        raise PsymError(f"{where}: expected a JSON object per respondent")
    unknown = set(raw) - {"id", "persona", "labels", "source", "licence"}
    if unknown:
        raise PsymError(f"{where}: unknown field(s) {', '.join(sorted(unknown))[:200]}")
    rid, persona = raw.get("id"), raw.get("persona")
    problem = id_problem(rid)
    if problem is not None or not isinstance(rid, str):
        raise PsymError(f"{where}: field 'id': {problem}")
    if not isinstance(persona, str) or not persona.strip() or len(persona) > MAX_PERSONA:
        raise PsymError(
            f"{where}: field 'persona': expected a non-empty text of <= {MAX_PERSONA:,} characters"
        )
    labels, source = raw.get("labels", {}), raw.get("source", {})
    if not isinstance(labels, dict) or len(labels) > MAX_LABELS:
        raise PsymError(f"{where}: field 'labels': expected an object of <= {MAX_LABELS} fields")
    for key, value in labels.items():
        if value is not None and not isinstance(value, str | int | float | bool):
            raise PsymError(f"{where}: field 'labels.{key[:40]}': expected a string or a number")
    if not isinstance(source, dict):
        raise PsymError(f"{where}: field 'source': expected an object")
    licence = raw.get("licence", "")
    if not isinstance(licence, str):
        raise PsymError(f"{where}: field 'licence': expected a string")
    return Respondent(rid, persona, labels, source, licence)
