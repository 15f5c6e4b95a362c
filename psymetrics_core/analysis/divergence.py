"""Divergence between methods: one model's constructs measured by several methods (self-report,
interview, generation probability; Song et al., 2025) and where their profiles disagree.

Each run's task is a *profile*: (model, method, task) -> construct -> score, the mean of the
scale's score over the task's administrations (both option orders averaged, as Song et al.
do; administrations under other conditions such as a persona are left out and counted).
Constructs are matched across tasks by the declared table ``divergence_constructs.yaml``.
For every model and construct family, every pair of profiles sharing 3+ constructs gets
Spearman's rho with its permutation p and bootstrap interval and NDCG (``divergence_stats``);
a pair of two tasks of the same method (PVQ-40 vs PVQ-21, BFI-44 vs BFI-10) is the
within-method baseline, any other pair is cross-method. Across models, the sign-flip test asks
whether within-method agreement beats cross-method agreement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from psymetrics_core.analysis.divergence_stats import (
    NDCG_TIES,
    Rho,
    SignFlip,
    ndcg,
    rank_agreement,
    sign_flip,
)
from psymetrics_core.analysis.records import read_results, unit_label
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import parse_yaml
from psymetrics_core.records.population_summary import fired

__all__ = [
    "BEHAVIOUR",
    "Constructs",
    "Profile",
    "PairResult",
    "Divergence",
    "load_constructs",
    "profiles_of",
    "compare",
    "divergence",
    "divergence_of",
]

INTERVIEW = "interview"
BEHAVIOUR = "behaviour"  # a behaviour task's share per construct, on few judged units
OPTION_ORDER = "option_order"  # averaged over, as Song et al. average both option orders
ADMINISTRATION = "administration"  # the interview facet decides the method, not the profile


@dataclass(frozen=True)
class Constructs:
    """The declared table: each task's method; per family, construct -> {task: scale}."""

    methods: dict[str, str]
    families: dict[str, dict[str, dict[str, str]]]


def load_constructs(path: str | Path | None = None) -> Constructs:
    """The construct table at ``path`` or the shipped ``divergence_constructs.yaml``."""
    where = str(path) if path else "divergence_constructs.yaml"
    if path is None:
        text = resources.files(__package__).joinpath("divergence_constructs.yaml").read_text()
    else:
        text = Path(path).read_text(encoding="utf-8")
    raw = parse_yaml(text, where)
    if not isinstance(raw, dict) or not isinstance(raw.get("families"), dict):
        raise PsymError(f"{where}: expected a mapping with 'methods' and 'families'")
    methods = {str(k): str(v) for k, v in (raw.get("methods") or {}).items()}
    families: dict[str, dict[str, dict[str, str]]] = {}
    for fam, constructs in raw["families"].items():
        if not isinstance(constructs, dict):
            raise PsymError(f"{where}: family {fam!r}: expected construct: {{task: scale}}")
        families[str(fam)] = {
            str(c): {str(t): str(s) for t, s in (tasks or {}).items()}
            for c, tasks in constructs.items()
        }
    return Constructs(methods, families)


@dataclass
class Profile:
    """One (model, method, task)'s scores per construct of a family, and the rows behind them."""

    model: str
    method: str
    task: str
    family: str
    scores: dict[str, float]
    n_administrations: int
    n_left_out: int
    run: str
    #: administrations whose answer pattern is degenerate (a validity indicator fired):
    #: the profile then describes that pattern, not the model (flagged wherever it is shown)
    n_degenerate: int = 0
    #: construct -> the units its score rests on, summed over the administrations (the scale's
    #: ``n``: items answered, dilemmas judged); a behaviour task's few units show here
    n_units: dict[str, int] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """``method:task`` (the profile's name in a model's table)."""
        return f"{self.method}:{self.task}"


def _method(
    constructs: Constructs, task: str, facets: Mapping[str, str], impute: str | None = None
) -> str | None:
    """The administration's method: an interview mode by its name, with the run's imputation
    (``--impute midpoint``: ``interview+impute-midpoint``, never pooled with an unimputed
    interview), else the task's declared method."""
    mode = str(facets.get(ADMINISTRATION, ""))
    if INTERVIEW in mode:
        return f"{mode}+impute-{impute}" if impute else mode
    return constructs.methods.get(task)


def profiles_of(run_dirs: Sequence[str | Path], constructs: Constructs) -> list[Profile]:
    """Every profile the runs hold: per run, task and family with 1+ mapped construct."""
    out: list[Profile] = []
    for d in run_dirs:
        results = read_results(d)
        model = unit_label(results)
        impute = results.get("impute")  # the run's --impute: its interviews' own method
        for task, entry in (results.get("tasks") or {}).items():
            out.extend(_task_profiles(str(d), model, task, entry, constructs, impute))
    return out


def _task_profiles(
    run: str,
    model: str,
    task: str,
    entry: Mapping[str, Any],
    constructs: Constructs,
    impute: str | None = None,
) -> list[Profile]:
    """The task's profiles, one per (method, family): scale means over the used runs."""
    by_method: dict[str, list[Mapping[str, Any]]] = {}
    left_out = 0
    for r in entry.get("runs") or []:
        facets = dict(r.get("facets") or {})
        method = _method(constructs, task, facets, impute)
        others = set(facets) - {OPTION_ORDER, ADMINISTRATION}
        if method is None:
            continue
        if others:
            left_out += 1
            continue
        by_method.setdefault(method, []).append(r)
    out = []
    for method, runs in by_method.items():
        for fam, table in constructs.families.items():
            scores, units = _scores(runs, task, table)
            if scores:
                flagged = sum(1 for r in runs if fired(r.get("indicators")))
                used = len(runs)
                prof = Profile(model, method, task, fam, scores, used, left_out, run, flagged)
                prof.n_units = units
                out.append(prof)
    return out


def _units(scale: Mapping[str, Any]) -> int:
    """The units a scale's score rests on: a judged share's ``n`` (dilemmas with a verdict),
    else the items answered."""
    n = scale.get("n") if isinstance(scale.get("n"), int) else scale.get("n_answered")
    return int(n) if isinstance(n, int) else 0


def _scores(
    runs: Sequence[Mapping[str, Any]], task: str, table: Mapping[str, Mapping[str, str]]
) -> tuple[dict[str, float], dict[str, int]]:
    """Construct -> mean of its scale's score over ``runs`` (a None score is left out), and
    construct -> the units those scores rest on (the scales' ``n``, summed)."""
    out, units = {}, {}
    for construct, tasks in table.items():
        scale = tasks.get(task)
        if scale is None:
            continue
        used = [
            s
            for r in runs
            if isinstance(s := (r.get("scales") or {}).get(scale), Mapping)
            and isinstance(s.get("score"), int | float)
        ]
        if used:
            out[construct] = sum(float(s["score"]) for s in used) / len(used)
            units[construct] = sum(_units(s) for s in used)
    return out, units


@dataclass(frozen=True)
class PairResult:
    """Two profiles of one model and family compared on their shared constructs."""

    model: str
    family: str
    first: str
    second: str
    kind: str  # "within-method" or "cross-method"
    constructs: list[str]
    rho: Rho
    ndcg: float | None
    ndcg_at_3: float | None

    def to_json(self) -> dict[str, Any]:
        """The pair as JSON (``rho`` flattened)."""
        out = asdict(self)
        out["ndcg_ties"] = NDCG_TIES
        return out


def compare(a: Profile, b: Profile) -> PairResult:
    """Rho, p, interval and NDCG of ``b`` against ``a`` (the reference ranking of NDCG)."""
    names = [c for c in a.scores if c in b.scores]
    x, y = [a.scores[c] for c in names], [b.scores[c] for c in names]
    kind = "within-method" if a.method == b.method else "cross-method"
    rho = rank_agreement(x, y)
    ok = rho.rho is not None
    return PairResult(
        a.model,
        a.family,
        a.key,
        b.key,
        kind,
        names,
        rho,
        ndcg(names, x, y) if ok else None,
        ndcg(names, x, y, 3) if ok else None,
    )


@dataclass
class Divergence:
    """Every model's profiles and pairs, and per family the sign-flip test across models."""

    profiles: list[Profile]
    pairs: list[PairResult]
    tests: dict[str, SignFlip] = field(default_factory=dict)
    differences: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The section's data."""
        return {
            "profiles": [asdict(p) | {"key": p.key} for p in self.profiles],
            "pairs": [p.to_json() for p in self.pairs],
            "within_vs_cross": {
                fam: {"test": asdict(t), "differences": self.differences.get(fam, {})}
                for fam, t in self.tests.items()
            },
        }


def divergence(run_dirs: Sequence[str | Path], constructs: Constructs | None = None) -> Divergence:
    """Profiles, pairwise agreement and the within- vs cross-method test of ``run_dirs``."""
    return divergence_of(profiles_of(run_dirs, constructs or load_constructs()))


def divergence_of(profiles: Sequence[Profile]) -> Divergence:
    """Pairwise agreement of ``profiles`` (same model and family, 3+ shared constructs) and,
    per family, the sign-flip test of within- against cross-method agreement across models."""
    pairs = []
    groups: dict[tuple[str, str], list[Profile]] = {}
    for p in profiles:
        groups.setdefault((p.model, p.family), []).append(p)
    for group in groups.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if a.key != b.key and len([c for c in a.scores if c in b.scores]) >= 3:
                    pairs.append(compare(a, b))
    out = Divergence(list(profiles), pairs)
    _within_vs_cross(out)
    return out


def _within_vs_cross(out: Divergence) -> None:
    """Per family, d = mean within-method rho - mean cross-method rho of each model that has
    both; the sign-flip test of the mean d across those models."""
    per: dict[str, dict[str, dict[str, list[float]]]] = {}
    for p in out.pairs:
        if p.rho.rho is None:
            continue
        slot = per.setdefault(p.family, {}).setdefault(p.model, {})
        slot.setdefault(p.kind, []).append(p.rho.rho)
    for fam, models in per.items():
        d = {
            m: sum(k["within-method"]) / len(k["within-method"])
            - sum(k["cross-method"]) / len(k["cross-method"])
            for m, k in models.items()
            if k.get("within-method") and k.get("cross-method")
        }
        if d:
            out.differences[fam] = d
            out.tests[fam] = sign_flip(list(d.values()))
