"""The report's divergence section: per model and construct family, the method x construct
profile table and every pair of profiles, formatted as ``psym analyze`` prints them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psymetrics_core.analysis.divergence import divergence
from psymetrics_core.analysis.divergence_section import num, pair_cells, units_note
from psymetrics_core.analysis.divergence_stats import NDCG_TIES
from psymetrics_core.base.errors import PsymError
from psymetrics_core.records.read import RunData

__all__ = ["divergence_context"]


def divergence_context(runs: Sequence[RunData]) -> dict[str, Any]:
    """{"blocks": [...], "tests": [...], "ties": ..., "note": ...} for the template."""
    try:
        result = divergence([r.path for r in runs])
    except PsymError as exc:
        return {"blocks": [], "tests": [], "ties": NDCG_TIES, "note": str(exc)}
    blocks = []
    for model, fam in sorted({(p.model, p.family) for p in result.pairs}):
        profs = [p for p in result.profiles if p.model == model and p.family == fam]
        names = list(dict.fromkeys(c for p in profs for c in p.scores))
        blocks.append(
            {
                "title": f"{model} · {fam}",
                "constructs": names,
                "profiles": [
                    {
                        "key": p.key,
                        "cells": [num(p.scores.get(c)) for c in names],
                        "n": p.n_administrations,
                        "left_out": p.n_left_out,
                        "degenerate": p.n_degenerate,
                        "units": units_note(p),
                    }
                    for p in profs
                ],
                "pairs": [
                    pair_cells(p) for p in result.pairs if p.model == model and p.family == fam
                ],
            }
        )
    tests = [
        {
            "family": fam,
            "n": t.n,
            "mean": num(t.mean),
            "p1": num(t.p_one_sided),
            "p2": num(t.p_two_sided),
            "method": t.method or "",
            "note": t.reason or "",
        }
        for fam, t in result.tests.items()
    ]
    return {"blocks": blocks, "tests": tests, "ties": NDCG_TIES, "note": ""}
