"""Ground-truth labels of persona targets (turn on the validity metrics of the analysis).

A labels file is JSON mapping a target key (the persona file's stem, e.g. ``frieren`` for
``--condition persona=frieren.txt``) to its labels, in the layout of the Personality Database
labels released by Wang et al. (2026)::

    {"frieren": {"mbti": {"type": "INTP"},
                 "big_five": {"openness": {"level": 4}, "conscientiousness": {"level": 2}, ...},
                 "depression": 1, "suicide": 0}}

Every part is optional per target; risk levels may also be given as ``label: {drisk, srisk}``
(the AnnaAgent convention). Errors name the file, line and target.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from psymetrics_core.api import PsymError, parse_json, read_text

__all__ = ["TargetLabels", "read_labels", "TRAITS"]

TRAITS = {
    "O": "openness",
    "C": "conscientiousness",
    "E": "extraversion",
    "A": "agreeableness",
    "N": "neuroticism",
}


@dataclass(frozen=True)
class TargetLabels:
    """Ground truth of one target: Big Five levels 1-5, MBTI type, risk levels 0-3."""

    key: str
    big_five: dict[str, int | None] = field(default_factory=dict)
    mbti: str | None = None
    depression: int | None = None
    suicide: int | None = None


def read_labels(path: str | Path) -> dict[str, TargetLabels]:
    """Labels per target key from a JSON labels file (see the module docstring)."""
    p = Path(path)
    if not p.is_file():
        raise PsymError(f"{p}: no such labels file")
    raw = read_text(p, what="labels file")
    data = parse_json(raw, p)  # bad JSON: one line naming file and line (safe_io)
    if not isinstance(data, dict) or not data:
        raise PsymError(f"{p}, line 1: expected an object mapping target keys to labels")
    return {str(k): _target(p, raw, str(k), v) for k, v in data.items()}


def _target(p: Path, raw: str, key: str, entry: Any) -> TargetLabels:
    at = raw.find(json.dumps(key))
    line = raw.count("\n", 0, at) + 1 if at >= 0 else 1
    where = f"{p}, line {line} (target {key!r})"
    if not isinstance(entry, dict):
        raise PsymError(f"{where}: expected an object of labels")
    mbti = None
    if entry.get("mbti") is not None:
        m = entry["mbti"]
        mbti = str(m.get("type") if isinstance(m, dict) else m or "").upper()
        if not re.fullmatch(r"[EI][SN][TF][JP]", mbti):
            raise PsymError(f"{where}: mbti type {mbti!r} is not a 4-letter type such as INTP")
    big_five: dict[str, int | None] = {}
    bf = entry.get("big_five")
    if bf is not None:
        if not isinstance(bf, dict):
            raise PsymError(f"{where}: big_five must be an object of traits")
        for letter, trait in TRAITS.items():
            cell = bf.get(trait, bf.get(letter))
            level = cell.get("level") if isinstance(cell, dict) else cell
            big_five[letter] = _level(where, f"big_five.{trait}", level, 1, 5)
    raw_label = entry.get("label")
    label: dict[str, Any] = raw_label if isinstance(raw_label, dict) else {}
    dep = _level(where, "depression", entry.get("depression", label.get("drisk")), 0, 3)
    sui = _level(where, "suicide", entry.get("suicide", label.get("srisk")), 0, 3)
    return TargetLabels(key, big_five, mbti, dep, sui)


def _level(where: str, name: str, value: Any, low: int, high: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise PsymError(f"{where}: {name} must be an integer {low}-{high}, got {value!r}")
    return value
