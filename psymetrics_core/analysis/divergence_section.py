"""``psym analyze``'s divergence section: the method x construct profile table of each model
and the agreement between its methods (``analysis.divergence``), as text and data."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from psymetrics_core.analysis.divergence import (
    BEHAVIOUR,
    Divergence,
    PairResult,
    Profile,
    divergence,
)
from psymetrics_core.analysis.divergence_stats import NDCG_TIES
from psymetrics_core.contracts.analyses import AnalysisSection

__all__ = ["DIVERGENCE_TITLE", "divergence_section", "num", "pair_cells", "render", "units_note"]

DIVERGENCE_TITLE = "Divergence between methods (Spearman's rho between construct profiles)"


def num(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def pair_cells(p: PairResult) -> dict[str, str]:
    """A pair's numbers as every screen shows them (the terminal line, the HTML report)."""
    r = p.rho
    ci = f"[{num(r.ci_low)}, {num(r.ci_high)}]" if r.ci_low is not None else "—"
    return {
        "pair": f"{p.first} vs {p.second}",
        "kind": p.kind,
        "n": str(r.n),
        "rho": num(r.rho),
        "p": num(r.p),
        "p_method": r.p_method or "",
        "ci": ci,
        "ndcg": num(p.ndcg),
        "ndcg3": num(p.ndcg_at_3),
        "note": r.reason or r.ci_reason or "",
    }


def units_note(p: Profile) -> str:
    """How many units each construct of a behaviour profile rests on (a few judged dilemmas
    make a thin profile); "" for other methods. The same words on every screen."""
    if p.method != BEHAVIOUR:
        return ""
    rests = ", ".join(f"{c} {p.n_units.get(c, 0)}" for c in p.scores)
    return f"rests on n units per construct: {rests}"


def _pair_line(p: PairResult) -> str:
    r = p.rho
    if r.rho is None:
        return f"  {p.first} vs {p.second} ({p.kind}, n={r.n}): rho — ({r.reason})"
    ci = f"[{num(r.ci_low)}, {num(r.ci_high)}]" if r.ci_low is not None else f"— ({r.ci_reason})"
    return (
        f"  {p.first} vs {p.second} ({p.kind}, n={r.n}): rho {num(r.rho)}, "
        f"p {num(r.p)} ({r.p_method}), 95% bootstrap {ci}, NDCG {num(p.ndcg)}, "
        f"NDCG@3 {num(p.ndcg_at_3)}"
    )


def render(result: Divergence) -> str:
    """The section's text: per model and family, the profile table and every pair."""
    lines: list[str] = []
    flagged = False
    seen = sorted({(p.model, p.family) for p in result.profiles})
    for model, fam in seen:
        profs = [p for p in result.profiles if p.model == model and p.family == fam]
        pairs = [p for p in result.pairs if p.model == model and p.family == fam]
        if not pairs:
            continue
        names = list(dict.fromkeys(c for p in profs for c in p.scores))
        lines.append(f"{model} · {fam}")
        lines.append("  " + f"{'method:task':<34}" + "".join(f"{c[:17]:>18}" for c in names))
        for p in profs:
            cells = "".join(f"{num(p.scores.get(c), 3):>18}" for c in names)
            used = f"  ({p.n_administrations} administration(s)"
            used += f", {p.n_left_out} under other conditions left out)" if p.n_left_out else ")"
            if p.n_degenerate:
                used += f" ! {p.n_degenerate} degenerate answer pattern(s)"
                flagged = True
            lines.append(f"  {p.key:<34}{cells}{used}")
            if units := units_note(p):
                lines.append(f"    {p.key} {units}")
        lines.extend(_pair_line(p) for p in pairs)
    for fam, t in result.tests.items():
        lines.append(
            f"within- vs cross-method, {fam}: {t.n} model(s), mean d {num(t.mean)}, "
            f"p one-sided {num(t.p_one_sided)}, two-sided {num(t.p_two_sided)} ({t.method})"
            + (f" — {t.reason}" if t.reason else "")
        )
    if flagged:
        lines.append(
            "! a validity indicator fired on these answers (e.g. straight-lining): the profile "
            "describes that pattern, not the model, and so does its rho"
        )
    lines.append(f"NDCG: {NDCG_TIES}.")
    return "\n".join(lines)


def divergence_section(run_dirs: Sequence[Path]) -> AnalysisSection | None:
    """None unless some model has two profiles of one family to compare."""
    runs = [d for d in run_dirs if (Path(d) / "results.json").is_file()]
    if len(runs) < 1:
        return None
    result = divergence(runs)
    if not result.pairs:
        return None
    return AnalysisSection("divergence", DIVERGENCE_TITLE, render(result), result.to_json())
