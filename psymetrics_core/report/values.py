"""Small helpers every report section shares: numbers for the page and walking run records."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from psymetrics_core.records.read import RunData

__all__ = [
    "num",
    "fmt",
    "cell",
    "is_questionnaire",
    "task_order",
    "scale_order",
    "administrations",
]


def num(x: Any) -> float | None:
    """``x`` as a float, or None when it is not a (non-NaN) number."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return None if math.isnan(float(x)) else float(x)


def fmt(x: Any, digits: int = 2) -> str:
    """A number for the page, or an em dash."""
    v = num(x)
    return "—" if v is None else f"{v:.{digits}f}"


def is_questionnaire(entry: dict[str, Any]) -> bool:
    """Whether a results entry is a questionnaire task (the default kind)."""
    return entry.get("kind", "questionnaire") == "questionnaire"


def task_order(runs: Sequence[RunData]) -> list[str]:
    """Task ids of all runs, in first-seen order."""
    return list(dict.fromkeys(t for r in runs for t in r.tasks))


def scale_order(runs: Sequence[RunData], task: str) -> list[str]:
    """Scale names of ``task`` over all runs, in first-seen order."""
    return list(dict.fromkeys(s for r in runs for s in (r.tasks.get(task) or {}).get("scales", {})))


def administrations(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The administrations (condition x repeat) of a task entry; the entry itself if one."""
    return list(entry.get("runs") or [entry])


def cell(v: Any) -> str:
    """Any JSON value as table-cell text (floats to 3 digits, None as an em dash)."""
    if isinstance(v, float):
        return fmt(v, 3)
    if isinstance(v, dict | list):
        return json.dumps(v, sort_keys=True, ensure_ascii=False)
    return "—" if v is None else str(v)
