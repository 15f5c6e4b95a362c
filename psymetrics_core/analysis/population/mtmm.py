"""Convergent and discriminant validity across instruments of the same traits at respondent
level: the multitrait-multimethod matrix of Campbell & Fiske (1959).

Input: each method's (task's) per-respondent scale scores and a trait table (trait -> {task:
scale}; the shipped ``mtmm_traits.yaml`` or the user's ``--mtmm FILE``). Respondents are matched
by their key (run|condition|repeat: one eval given several tasks) or, when the tasks share no
key (separate runs), by persona, each persona's scores averaged over its administrations.

Output: Pearson's r of every pair of (trait, method) scores over the respondents who have both
(pairwise complete), split into the validity diagonal (monotrait-heteromethod, with the 95%
interval by Fisher's z, tanh(atanh(r) +- 1.96 / sqrt(n - 3)), and the two-sided t-test p),
heterotrait-heteromethod and heterotrait-monomethod values, and Campbell & Fiske's criteria as
counts of the comparisons made and of those that hold:

1. each validity value is positive and significant (p < .05);
2. it is higher than the heterotrait-heteromethod values in its row and column (compared with
   their absolute values, so a strong negative trait relation does not pass for discrimination);
3. it is higher than the heterotrait-monomethod values of its trait in both methods (absolute);
4. the pattern of trait interrelations is the same in every heterotrait triangle (each method's
   monomethod triangle and the two triangles of each heteromethod block): for every two
   triangles and every two trait pairs, the order of the two correlations agrees (needs 3+
   traits: with two traits there is one trait pair, nothing to order).

Undefined values are None with the reason naming the traits and tasks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.stats import t as t_dist

from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.diagnostics import scale_scores
from psymetrics_core.analysis.population.population_data import PopulationData
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import parse_yaml, read_text

if TYPE_CHECKING:
    from psymetrics_core.base.types import Instrument

__all__ = [
    "TraitTable",
    "Variable",
    "Correlation",
    "CFCriterion",
    "MTMM",
    "load_trait_table",
    "applicable",
    "mtmm",
    "mtmm_part",
    "trait_table",
    "fisher_ci",
    "mtmm_text",
]

Z975 = 1.959963984540054  # norm.ppf(0.975)


@dataclass(frozen=True)
class TraitTable:
    """trait -> {method (task id): that task's scale of the trait}; ``source`` names the file."""

    traits: Mapping[str, Mapping[str, str]]
    source: str

    def methods(self) -> list[str]:
        """The tasks the table names, in order of first appearance."""
        return list(dict.fromkeys(m for ms in self.traits.values() for m in ms))


@dataclass(frozen=True)
class Variable:
    trait: str
    method: str
    scale: str


@dataclass(frozen=True)
class Correlation:
    """Pearson's r of two (trait, method) scores with its Fisher-z 95% interval and p."""

    trait_a: str
    method_a: str
    trait_b: str
    method_b: str
    r: float | None
    ci95: tuple[float, float] | None
    p: float | None
    n: int
    reason: str | None = None


@dataclass(frozen=True)
class CFCriterion:
    """One of Campbell & Fiske's criteria: comparisons made and how many hold."""

    criterion: int
    name: str
    comparisons: int
    holds: int
    reason: str | None = None


@dataclass
class MTMM:
    """The multitrait-multimethod analysis (see the module docstring); ``reason`` when
    undefined as a whole (then the matrix and the lists are empty). ``matrix``: r of every two
    ``variables`` (None: undefined, see the lists' reasons); its diagonal, the reliabilities in
    Campbell & Fiske's layout, is None here: each task's entry has its alpha and omega."""

    table: str
    traits: list[str]
    methods: list[str]
    matched_by: str | None = None
    n_matched: int = 0
    variables: list[Variable] = field(default_factory=list)
    matrix: list[list[float | None]] | None = None
    validity: list[Correlation] = field(default_factory=list)
    heterotrait_heteromethod: list[Correlation] = field(default_factory=list)
    heterotrait_monomethod: list[Correlation] = field(default_factory=list)
    criteria: list[CFCriterion] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


SHIPPED = "mtmm_traits.yaml"


def load_trait_table(path: str | Path | None = None) -> TraitTable:
    """The trait table at ``path``, or the shipped ``mtmm_traits.yaml``."""
    if path is None:
        res = resources.files("psymetrics_core.analysis.population") / SHIPPED
        text, where = res.read_text(encoding="utf-8"), SHIPPED
    else:
        p = Path(path)
        if not p.is_file():
            raise PsymError(f"--mtmm {p}: no such trait table file")
        text, where = read_text(p, what="trait table"), str(p)
    raw = parse_yaml(text, where)
    if not isinstance(raw, dict) or not isinstance(raw.get("traits"), dict) or not raw["traits"]:
        raise PsymError(
            f"{where}: expected a mapping with a non-empty 'traits' mapping "
            "(trait: {TASK: SCALE, ...})"
        )
    traits: dict[str, dict[str, str]] = {}
    owner: dict[tuple[str, str], str] = {}
    for trait, methods in raw["traits"].items():
        at = f"{where}: traits.{_show(trait, quote=False)}"
        if not _name(trait):
            raise PsymError(f"{at}: a trait name must be a non-empty printable string")
        if not isinstance(methods, dict) or not methods:
            raise PsymError(f"{at}: expected a mapping TASK: SCALE, got {_show(methods)}")
        traits[trait] = _methods(at, trait, methods, owner)
    return TraitTable(traits, where)


def _methods(
    at: str, trait: str, methods: dict[Any, Any], owner: dict[tuple[str, str], str]
) -> dict[str, str]:
    """One trait's {task: scale}, each scale of a task owned by one trait only."""
    for m, s in methods.items():
        here = f"{at}.{_show(m, quote=False)}"
        if not _name(m) or not _name(s):
            raise PsymError(
                f"{here}: expected TASK: SCALE (two non-empty printable strings), "
                f"got {_show(m)}: {_show(s)}"
            )
        if (m, s) in owner:
            raise PsymError(
                f"{here}: scale {_show(s)} is already the scale of trait "
                f"{_show(owner[(m, s)])} (one scale measures one trait)"
            )
        owner[(m, s)] = trait
    return dict(methods)


def _name(v: object) -> bool:
    return isinstance(v, str) and bool(v.strip()) and v.isprintable()


def _show(v: object, quote: bool = True) -> str:
    """``v`` for a message: repr (one line), at most 60 characters."""
    text = repr(v) if quote or not isinstance(v, str) else repr(v)[1:-1]
    return text if len(text) <= 60 else text[:57] + "..."


def applicable(table: TraitTable, tasks: Sequence[str]) -> bool:
    """Whether ``tasks`` hold 2+ of the table's tasks sharing 2+ traits."""
    shared = [t for t, ms in table.traits.items() if sum(m in tasks for m in ms) >= 2]
    return len(shared) >= 2


def fisher_ci(r: float, n: int) -> tuple[float, float] | None:
    """The 95% interval of Pearson's r by Fisher's z (None: n < 4 or |r| = 1)."""
    if n < 4 or abs(r) >= 1.0:
        return None
    z, se = math.atanh(r), 1.0 / math.sqrt(n - 3)
    return (math.tanh(z - Z975 * se), math.tanh(z + Z975 * se))


def trait_table(path: Path | None, instruments: Mapping[str, Instrument]) -> TraitTable:
    """The table at ``path`` (or the shipped one), each scale of an installed task checked
    against the task's instrument."""
    table = load_trait_table(path)
    for trait, ms in table.traits.items():
        for task, scale in ms.items():
            inst = instruments.get(task)
            if inst is not None and scale not in inst.scales:
                have = ", ".join(inst.scales)
                raise PsymError(
                    f"{table.source}: traits.{trait}.{task}: task {task} has no "
                    f"scale {scale!r} (its scales: {have})"
                )
    return table


def mtmm_part(
    found: Mapping[str, PopulationData],
    structures: Mapping[str, ScaleStructure],
    table: TraitTable,
    given: bool = True,
) -> MTMM | None:
    """The section-level ``mtmm`` part of population runs (``found``: task -> its data,
    ``structures``: task -> scale structure) under ``table``; a table not ``given`` (the
    shipped one) applies only when the runs hold 2+ of its tasks sharing 2+ traits (else
    None). A scale of which the run gave no item (``--limit``) has no scores."""
    if not given and not applicable(table, list(structures)):
        return None
    scores, persona = {}, {}
    for task in (t for t in table.methods() if t in structures):
        pop = found[task]
        per = scale_scores(Responses(pop.values, pop.persona), structures[task])
        wanted = [ms[task] for ms in table.traits.values() if task in ms]
        frame = pd.DataFrame(per, index=pop.values.index)
        scores[task] = frame.reindex(columns=list(dict.fromkeys([*frame.columns, *wanted])))
        persona[task] = pop.persona
    return mtmm(scores, table, persona)


def _corr(a: Variable, b: Variable, x: np.ndarray, y: np.ndarray) -> Correlation:
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y, n = x[ok], y[ok], int(ok.sum())
    names = (a.trait, a.method, b.trait, b.method)
    what = f"{a.method}.{a.scale} ~ {b.method}.{b.scale}"
    if n < 3:
        return Correlation(
            *names, None, None, None, n, f"{what}: {n} matched respondents (needs 3+)"
        )
    for v, s in ((a, x), (b, y)):
        if np.ptp(s) == 0:
            return Correlation(
                *names,
                None,
                None,
                None,
                n,
                f"{v.method}.{v.scale} ({v.trait}) never varies over the {n} matched respondents",
            )
    r = float(np.clip(np.corrcoef(x, y)[0, 1], -1.0, 1.0))
    if abs(r) >= 1.0:
        p = 0.0
    else:
        t = r * math.sqrt((n - 2) / (1.0 - r * r))
        p = float(2.0 * t_dist.sf(abs(t), n - 2))
    ci = fisher_ci(r, n)
    short = "|r| = 1" if n >= 4 else "n = 3"
    why = None if ci else f"{what}: no Fisher-z interval ({short})"
    return Correlation(*names, r, ci, p, n, why)


def _align(
    scores: Mapping[str, pd.DataFrame],
    variables: list[Variable],
    persona: Mapping[str, pd.Series] | None,
) -> tuple[pd.DataFrame, str]:
    """One frame, a column per variable, rows = matched respondents (outer join)."""
    methods = list(dict.fromkeys(v.method for v in variables))
    frames = {m: scores[m] for m in methods}
    common = set.intersection(*(set(map(str, f.index)) for f in frames.values()))
    by = "respondent"
    if not common and persona is not None and all(m in persona for m in methods):
        by = "persona"
        frames = {
            m: f.groupby(persona[m].reindex(f.index).to_numpy()).mean() for m, f in frames.items()
        }
    cols = {f"{v.method}\x00{v.trait}": frames[v.method][v.scale] for v in variables}
    return pd.DataFrame(cols).astype(float), by


def _check_scales(table: TraitTable, scores: Mapping[str, pd.DataFrame]) -> None:
    for trait, ms in table.traits.items():
        for m, s in ms.items():
            if m in scores and s not in scores[m].columns:
                have = ", ".join(map(str, scores[m].columns))
                raise PsymError(
                    f"{table.source}: traits.{trait}.{m}: task {m} has no scale "
                    f"{s!r} (its scales: {have})"
                )


def mtmm(
    scores: Mapping[str, pd.DataFrame],
    table: TraitTable,
    persona: Mapping[str, pd.Series] | None = None,
) -> MTMM:
    """The MTMM analysis of ``scores`` (task -> respondents x scales) under ``table``;
    ``persona`` (task -> respondent key -> persona id) for matching separate runs."""
    _check_scales(table, scores)
    present = [m for m in table.methods() if m in scores]
    traits, dropped = [], {}
    for t, ms in table.traits.items():
        have = [m for m in ms if m in present]
        if len(have) >= 2:
            traits.append(t)
        else:
            dropped[t] = f"measured by {', '.join(have) or 'no task'} here (needs 2+ tasks)"
    methods = [m for m in present if any(m in table.traits[t] for t in traits)]
    out = MTMM(table.source, traits, methods, dropped=dropped)
    if len(methods) < 2 or len(traits) < 2:
        out.reason = (
            f"needs 2+ traits measured by 2+ tasks: traits {', '.join(traits) or 'none'}"
            f" of tasks {', '.join(present) or 'none'} (table: "
            f"{', '.join(table.methods())})"
        )
        return out
    out.variables = [
        Variable(t, m, table.traits[t][m]) for m in methods for t in traits if m in table.traits[t]
    ]
    frame, out.matched_by = _align(scores, out.variables, persona)
    per_method = pd.DataFrame(
        {
            m: frame[[c for c in frame if c.startswith(m + "\x00")]].notna().any(axis=1)
            for m in methods
        }
    )
    out.n_matched = int((per_method.sum(axis=1) >= 2).sum())
    if out.n_matched < 3:
        out.reason = (
            f"{out.n_matched} respondents matched across tasks {', '.join(methods)} "
            f"(by {out.matched_by}; needs 3+)"
        )
        return out
    _fill(out, frame)
    out.criteria = _criteria(out)
    return out


def _fill(out: MTMM, frame: pd.DataFrame) -> None:
    vs = out.variables
    mat: list[list[float | None]] = [[None] * len(vs) for _ in vs]
    for i, j in combinations(range(len(vs)), 2):
        a, b = vs[i], vs[j]
        c = _corr(a, b, frame.iloc[:, i].to_numpy(), frame.iloc[:, j].to_numpy())
        mat[i][j] = mat[j][i] = c.r
        if a.trait == b.trait:
            out.validity.append(c)
        elif a.method == b.method:
            out.heterotrait_monomethod.append(c)
        else:
            out.heterotrait_heteromethod.append(c)
    out.matrix = mat


def _lookup(out: MTMM) -> dict[tuple[tuple[str, str], tuple[str, str]], float | None]:
    """(trait, method) pair -> r, both orders."""
    d: dict[tuple[tuple[str, str], tuple[str, str]], float | None] = {}
    for c in (*out.validity, *out.heterotrait_heteromethod, *out.heterotrait_monomethod):
        a, b = (c.trait_a, c.method_a), (c.trait_b, c.method_b)
        d[(a, b)] = d[(b, a)] = c.r
    return d


def _beats(v: float, others: list[float | None], count: list[int]) -> None:
    """Add to ``count`` [comparisons, holds] v against each defined |other|."""
    vals = [o for o in others if o is not None]
    count[0] += len(vals)
    count[1] += sum(v > abs(o) for o in vals)


def _criteria(out: MTMM) -> list[CFCriterion]:
    r = _lookup(out)
    c1, c2, c3 = [0, 0], [0, 0], [0, 0]
    for v in out.validity:
        if v.r is None or v.p is None:
            continue
        c1[0] += 1
        c1[1] += v.r > 0 and v.p < 0.05
        m1, m2, t = v.method_a, v.method_b, v.trait_a
        others = [u for u in out.traits if u != t]
        hh = [r.get(((t, m1), (u, m2))) for u in others]
        hh += [r.get(((u, m1), (t, m2))) for u in others]
        _beats(v.r, hh, c2)
        _beats(v.r, [r.get(((t, m), (u, m))) for u in others for m in (m1, m2)], c3)
    (n4, h4), why4 = _pattern(out, r)
    names = (
        "convergent r > 0 and significant (p < .05)",
        "convergent r > |heterotrait-heteromethod r| in its row and column",
        "convergent r > |heterotrait-monomethod r| of its trait",
        "same order of trait interrelations in every heterotrait triangle",
    )
    none = "no defined validity value to compare"
    return [
        CFCriterion(k + 1, names[k], n, h, None if n else (why4 if k == 3 else none))
        for k, (n, h) in enumerate((c1, c2, c3, [n4, h4]))
    ]


def _triangles(out: MTMM, r: Mapping[Any, float | None]) -> list[dict[tuple[str, str], float]]:
    tris: list[dict[tuple[str, str], float]] = []
    pairs = list(combinations(out.traits, 2))
    for m in out.methods:
        tris.append({(t, u): x for t, u in pairs if (x := r.get(((t, m), (u, m)))) is not None})
    for m1, m2 in combinations(out.methods, 2):
        for flip in (False, True):
            tri = {}
            for t, u in pairs:
                key = ((u, m1), (t, m2)) if flip else ((t, m1), (u, m2))
                if (x := r.get(key)) is not None:
                    tri[(t, u)] = x
            tris.append(tri)
    return [t for t in tris if len(t) >= 2]


def _pattern(out: MTMM, r: Mapping[Any, float | None]) -> tuple[tuple[int, int], str]:
    if len(out.traits) < 3:
        return (0, 0), "needs 3+ traits (with two there is one trait pair, nothing to order)"
    n = h = 0
    for a, b in combinations(_triangles(out, r), 2):
        common = [p for p in a if p in b]
        for p, q in combinations(common, 2):
            n += 1
            h += bool(np.sign(a[p] - a[q]) == np.sign(b[p] - b[q]))
    return (n, h), "fewer than two heterotrait triangles with 2+ defined values"


def _cell(x: float | None, mark: bool) -> str:
    s = "—" if x is None else f"{x:.2f}"
    return f"[{s}]" if mark else f" {s} "


def mtmm_text(m: MTMM) -> list[str]:
    """Plain text of an MTMM part: the lower triangle, the validity diagonal in brackets, the
    validity values with intervals and the criteria counts."""
    head = "MTMM (Campbell & Fiske 1959)"
    if m.reason:
        return [f"{head}: undefined ({m.reason})"]
    vs = m.variables
    names = [f"{v.method}.{v.scale}" for v in vs]
    w = max(map(len, names)) + 6
    out = [
        f"{head}, table {m.table}: {m.n_matched} respondents matched by "
        f"{m.matched_by}; [r] = validity diagonal"
    ]
    out.append(" " * w + "".join(f"{k + 1:>7}" for k in range(len(vs))))
    matrix = m.matrix or []
    for i, name in enumerate(names):
        cells = [_cell(matrix[i][j], vs[i].trait == vs[j].trait).rjust(7) for j in range(i)]
        out.append(f"  {i + 1:>2} {name}".ljust(w) + "".join(cells) + "      1".rjust(7))
    for c in m.validity:
        ci = "" if not c.ci95 else f" [{c.ci95[0]:.2f}, {c.ci95[1]:.2f}]"
        r = "—" if c.r is None else f"{c.r:.2f}"
        why = f" ({c.reason})" if c.reason else ""
        out.append(f"  validity {c.trait_a} {c.method_a}~{c.method_b}: r {r}{ci}, n {c.n}{why}")
    for k in m.criteria:
        why = f" ({k.reason})" if k.reason else ""
        out.append(f"  criterion {k.criterion} {k.name}: {k.holds}/{k.comparisons}{why}")
    if m.dropped:
        out.append("  left out: " + "; ".join(f"{t}: {why}" for t, why in m.dropped.items()))
    return out
