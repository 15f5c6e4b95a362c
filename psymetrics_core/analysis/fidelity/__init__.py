"""Human fidelity (``psym fidelity MODEL HUMAN``; ``psym analyze RUN --human FILE``): how close a
model's or a persona population's answer distribution on each item is to people's.

MODEL and HUMAN are each a run directory, an answers CSV (long or wide) or a distribution table
(``rundir``, ``answers``, ``table``); ``align`` puts both over one option set per item; the
metrics (``metrics``: OpinionQA's W1 and representativeness, Santurkar et al. 2023; TV and the
SimBench score, Hu et al. 2025; Jensen-Shannon divergence; KS on the ordinal scale) come per
item, per scale and overall with bootstrap intervals (``boot``), beside the human ceiling (two
random halves of the human sample), per human subgroup with steerability (``groups``) and, as an
option, Huang, Wu & Wang's (2025) effective human sample size (``khat``).

May import: base, instruments, records, backends, contracts, pluginsys, administer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from psymetrics_core.analysis.fidelity import compare
from psymetrics_core.analysis.fidelity.align import align
from psymetrics_core.analysis.fidelity.answers import read_csv_side
from psymetrics_core.analysis.fidelity.boot import draw
from psymetrics_core.analysis.fidelity.groups import group_rows
from psymetrics_core.analysis.fidelity.khat import k_hat
from psymetrics_core.analysis.fidelity.records import (
    FidelityResult,
    ItemFidelity,
    OptionSet,
    SideAnswers,
    SideInfo,
)
from psymetrics_core.analysis.fidelity.rundir import read_run_side
from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.session import Session

__all__ = ["FidelityOptions", "fidelity", "read_side", "FidelityResult"]


@dataclass(frozen=True)
class FidelityOptions:
    """The choices of one comparison."""

    task: str | None = None
    groups: tuple[str, ...] = ()
    n_boot: int = 1000
    seed: int = 1234
    khat: bool = False
    k_min: int = 2
    alpha: float = 0.05
    gamma: float = 0.5
    c: float = 2.0


def read_side(
    path: Path, task: str | None, known: Sequence[str] | None, groups: Sequence[str]
) -> SideAnswers:
    """A run directory or a CSV (answers or distribution table) as one side."""
    if path.is_dir():
        return read_run_side(path, task)
    if not path.exists():
        raise PsymError(
            f"{path}: no such file or directory (expected a run directory of "
            "`psym eval`, an answers CSV or a distribution table)"
        )
    return read_csv_side(path, known, groups)


def _instrument(
    session: Session, task: str | None
) -> tuple[dict[str, OptionSet], dict[str, tuple[str, ...]]]:
    if task is None:
        return {}, {}
    inst = session.get_instrument(task)
    options: dict[str, OptionSet] = {}
    scales: dict[str, tuple[str, ...]] = {}
    for item in inst.items:
        rs = inst.response_scale_for(item)
        options[item.id] = OptionSet(
            tuple(str(o.value) for o in rs.options),
            tuple(float(o.value) for o in rs.options),
            tuple(o.label for o in rs.options),
        )
        scales[item.id] = tuple(s for s in inst.scales if inst.counts_towards(item, s))
    return options, scales


def _degenerate(items: Sequence[ItemFidelity]) -> list[str]:
    """A flag when the model puts all its substantive answers on one option of most items
    (straight-lining or a constant reply: its distances then measure that, not people)."""
    one = [it for it in items if it.model.shares and max(it.model.shares) >= 1.0 - 1e-12]
    if len(one) * 2 <= len(items):
        return []
    values = sorted(
        {it.model.options.values[it.model.shares.index(max(it.model.shares))] for it in one}
    )
    return [
        f"degenerate: the model's answers fall on one option on {len(one)} of {len(items)} "
        f"items (option {', '.join(values)}): a constant reply, not a distribution"
    ]


def _info(side: SideAnswers, clusters: int) -> SideInfo:
    return SideInfo(
        path=str(side.path),
        kind=side.kind,
        method=side.method,
        units=int(side.frame["unit"].nunique()),
        clusters=clusters,
        rows=side.rows,
        resampled=side.resampled,
        outside_mass=side.outside_mass,
    )


def _read_both(
    model_path: Path, human_path: Path, session: Session, opts: FidelityOptions
) -> tuple[SideAnswers, SideAnswers, str | None]:
    """Both sides, a run (whose task the other side is read against) first; a wide answers file
    takes the instrument's items as its item columns."""
    task = session.task_id(opts.task) if opts.task else None
    paths = [model_path, human_path]
    first = 1 if human_path.is_dir() and not model_path.is_dir() else 0
    sides: list[SideAnswers | None] = [None, None]
    known = list(_instrument(session, task)[0]) if task else None
    sides[first] = read_side(paths[first], task, known, opts.groups)
    task = task or sides[first].task  # type: ignore[union-attr]
    known = list(_instrument(session, task)[0]) if task else None
    sides[1 - first] = read_side(paths[1 - first], task, known, opts.groups)
    model, human = sides
    assert model is not None and human is not None
    return model, human, task


def fidelity(
    model_path: str | Path,
    human_path: str | Path,
    session: Session,
    opts: FidelityOptions | None = None,
) -> FidelityResult:
    """Compare MODEL's answer distributions with HUMAN's (see the module docstring)."""
    opts = opts or FidelityOptions()
    model, human, task = _read_both(Path(model_path), Path(human_path), session, opts)
    inst, scales = _instrument(session, task)
    al = align(model, human, inst, scales or None, task)
    rng = np.random.default_rng(opts.seed)
    p, q = al.model.sum(axis=0), al.human.sum(axis=0)
    p_reps = draw(al.model, opts.n_boot, rng, model.resampled) if opts.n_boot else None
    q_reps = draw(al.human, opts.n_boot, rng, human.resampled) if opts.n_boot else None
    pt = compare.compute(p, q, al, p_reps, q_reps)
    items = compare.item_rows(al, pt, p, q)
    index = {it: i for i, it in enumerate(al.items)}
    scale_rows = [compare.scale_row(s, pt, [index[i] for i in its]) for s, its in al.scales.items()]
    notes = []
    ceiling = same_n = None
    n_model, n_human = al.model.shape[0], al.human.shape[0]
    if human.resampled and n_human >= 4:
        ceiling = compare.ceiling(al, max(opts.n_boot, 20), rng)
        if model.resampled and n_model < n_human:
            same_n = compare.ceiling(al, max(opts.n_boot, 20), rng, n_model)
    else:
        notes.append(
            "no human ceiling: the human side has fewer than 4 respondents or is a "
            "distribution table (no respondents to split)"
        )
    notes += _degenerate(items)
    for side, name in ((model, "model"), (human, "human")):
        if not side.resampled:
            notes.append(f"the {name} side is a distribution table: fixed, not resampled")
    groups = []
    for col in opts.groups:
        if col not in al.model_labels.columns and model.kind != "run":
            raise PsymError(f"{model.path}: --group {col}: no such column")
        groups += group_rows(
            al,
            col,
            opts.n_boot,
            rng,
            human_name=str(human.path),
            model_name=str(model.path),
            model_resampled=model.resampled,
            human_resampled=human.resampled,
        )
    kh = None
    if opts.khat:
        kh = k_hat(model, human, al, k_min=opts.k_min, alpha=opts.alpha, gamma=opts.gamma, c=opts.c)
    norm_reason = "SimBench's normaliser is 0 or undefined (see the docs)"
    return FidelityResult(
        model=_info(model, len(al.model_units)),
        human=_info(human, len(al.human_units)),
        task=task,
        n_boot=opts.n_boot,
        seed=opts.seed,
        items=items,
        scales=scale_rows,
        overall=compare.scale_row("overall", pt, range(len(al.items))),
        norm=compare.boot.estimate(pt.norm, pt.norm_reps, norm_reason),
        norm_items=[it.item for it in items if it.tv.value is not None],
        ceiling=ceiling,
        same_n=same_n,
        groups=groups,
        khat=kh,
        not_compared=al.not_compared,
        notes=notes,
    )
