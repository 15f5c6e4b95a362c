"""Score existing responses (human data or earlier model answers) from a long-format CSV.

The file is read by ``answer_files`` (the one reader of existing answers); this module scores it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psymetrics_core.administer.answer_files import read_responses
from psymetrics_core.base.types import Answer
from psymetrics_core.pluginsys.plugins import get_plugin_manager
from psymetrics_core.pluginsys.registry import get_instrument

__all__ = ["score_responses"]


def score_responses(
    task: str, path: str | Path, form: str = "original"
) -> dict[str, dict[str, Any]]:
    """Scale scores per respondent: {respondent: {scale: {score, n_items, n_answered}}}."""
    inst = get_instrument(task)
    hook = get_plugin_manager().hook
    out: dict[str, dict[str, Any]] = {}
    for who, answers in read_responses(path, inst, form).items():
        given = {k: Answer(v, "ok") for k, v in answers.items()}
        scores = hook.score(instrument=inst, responses=answers, form=form, answers=given)
        out[who] = {
            name: {"score": s.score, "n_items": s.n_items, "n_answered": s.n_answered}
            for name, s in scores.items()
        }
    return out
