"""Default ``aggregate``: a task's results entry with scale scores and parse counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..hookspecs import hookimpl
from ..types import Answer, Instrument, Item, ScaleScore

__all__ = ["aggregate"]


@hookimpl(trylast=True)
def aggregate(
    instrument: Instrument, scores: Mapping[str, ScaleScore], answers: Sequence[tuple[Item, Answer]]
) -> dict[str, Any]:
    """Scale scores with their item counts, and how many answers parsed, failed or refused."""
    statuses = [a.status for _, a in answers]
    n = len(statuses)
    n_ok = statuses.count("ok")
    return {
        "scales": {
            name: {
                "score": s.score,
                "n_items": s.n_items,
                "n_answered": s.n_answered,
                "method": s.method,
            }
            for name, s in scores.items()
        },
        "n_items": n,
        "n_answered": n_ok,
        "n_unparsed": statuses.count("unparsed"),
        "n_refused": statuses.count("refused"),
        "parse_rate": (n_ok / n) if n else None,
    }
