"""Default ``aggregate``: a task's results entry with scale scores, norms and parse counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from psymetrics_core.base.types import Answer, Instrument, Item, ScaleScore
from psymetrics_core.instruments.indicators import AnswerRow, questionnaire_indicators
from psymetrics_core.instruments.norms import norm_comparison, resolve_norm_group
from psymetrics_core.pluginsys.hookspecs import hookimpl

__all__ = ["aggregate", "aggregate_hook"]


@hookimpl(trylast=True, specname="aggregate")
def aggregate_hook(
    instrument: Instrument,
    scores: Mapping[str, ScaleScore],
    answers: Sequence[tuple[Item, Answer]],
    norm_group: str | None,
) -> dict[str, Any]:
    """The hook implementation (pluggy passes only arguments without defaults)."""
    return aggregate(instrument, scores, answers, norm_group)


def aggregate(
    instrument: Instrument,
    scores: Mapping[str, ScaleScore],
    answers: Sequence[tuple[Item, Answer]],
    norm_group: str | None = None,
) -> dict[str, Any]:
    """Scale scores with item counts and z-scores, and how many answers parsed or failed.

    ``norm_group`` None means the instrument's default (first) norm group. Plugins that wrap
    the default may call this function directly.
    """
    if norm_group is None:
        norm_group = resolve_norm_group(instrument, None)
    statuses = [a.status for _, a in answers]
    n = len(statuses)
    n_ok = statuses.count("ok")
    norms = norm_comparison(instrument, scores, norm_group)
    scales: dict[str, dict[str, Any]] = {}
    for name, s in scores.items():
        scales[name] = {
            "score": s.score,
            "n_items": s.n_items,
            "n_answered": s.n_answered,
            "method": s.method,
        }
        if name in norms:
            scales[name]["norm"] = norms[name]
            scales[name]["z"] = norms[name]["z"]
    out: dict[str, Any] = {
        "scales": scales,
        "norm_group": norm_group,
        "n_items": n,
        "n_answered": n_ok,
        "n_unparsed": statuses.count("unparsed"),
        "n_refused": statuses.count("refused"),
        "parse_rate": (n_ok / n) if n else None,
    }
    if instrument.kind == "questionnaire":
        out["indicators"] = questionnaire_indicators(answer_rows(instrument, answers))
    return out


def answer_rows(instrument: Instrument, answers: Sequence[tuple[Item, Answer]]) -> list[AnswerRow]:
    """The answers of one cell as the validity indicators read them (presented order)."""
    rows = []
    for it, a in answers:
        rs = instrument.response_scales.get(it.response_scale)
        if rs is None:
            continue
        value = None if a.value is None else float(a.value)
        rows.append(
            AnswerRow(
                value, a.status, it.reverse, it.scales, rs.min, rs.max, it.scored, rs.agree == "low"
            )
        )
    return rows
