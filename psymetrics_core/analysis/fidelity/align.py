"""Both sides of ``psym fidelity`` over one option set per item, as per-cluster mass arrays.

The options of an item come from the instrument (a run's prompts or ``--task``), else from a
distribution table's listed options, else from the values either side answered; their ordinal
positions are the instrument's values, a ``position`` column or the values as numbers. Two
sources that list different options for one item, or an answer outside the item's options, are
one error line naming the file (and line).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from psymetrics_core.analysis.fidelity.records import NONSUB, Aligned, OptionSet, SideAnswers
from psymetrics_core.base.errors import PsymError

__all__ = ["align"]


def _declared(
    model: SideAnswers, human: SideAnswers, instrument: Mapping[str, OptionSet]
) -> dict[str, OptionSet]:
    out = dict(instrument)
    for side in (model, human):
        for item, opts in side.options.items():
            old = out.setdefault(item, opts)
            if set(old.values) != set(opts.values):
                raise PsymError(
                    f"{side.path}: item '{item}': options {', '.join(opts.values)} differ from "
                    f"the other side's (or the instrument's) {', '.join(old.values)}"
                )
    return out


def _inferred(item: str, sides: tuple[SideAnswers, ...]) -> OptionSet:
    """An item's options from the answered values (no source lists them)."""
    found: dict[str, float] = {}
    for side in sides:
        rows = side.frame[(side.frame["item"] == item) & ~side.frame["key"].isin(NONSUB)]
        for key, pos, line in rows[["key", "position", "line"]].itertuples(index=False):
            if pos is None or pd.isna(pos):
                try:
                    pos = float(key)
                except ValueError:
                    raise PsymError(
                        f"{side.path}, line {line}: field 'response': {key!r} is not a number; "
                        "give its ordinal place in a 'position' column (or --task TASK)"
                    ) from None
            old = found.setdefault(key, float(pos))
            if old != pos:
                raise PsymError(
                    f"{side.path}, line {line}: field 'position': option '{key}' "
                    f"of item '{item}' has two positions ({old:g}, {pos:g})"
                )
    order = sorted(found, key=found.__getitem__)
    return OptionSet(tuple(order), tuple(found[k] for k in order))


def _check_items(side: SideAnswers, known: Mapping[str, OptionSet], task: str | None) -> None:
    """Items of ``side`` that the instrument does not have (when one is known)."""
    if task is None:
        return
    bad = side.frame[~side.frame["item"].isin(known)]
    if len(bad):
        line, item = int(bad["line"].iloc[0]), bad["item"].iloc[0]
        at = f"{side.path}, line {line}" if line else str(side.path)
        raise PsymError(f"{at}: field 'item': '{item}' is not an item of task {task}")


def _slots(items: list[str], options: list[OptionSet], k: int) -> pd.DataFrame:
    """item, key -> the flat slot of ``(items, k + 3)`` (options by position, then NONSUB)."""
    rows = []
    for i, (item, opts) in enumerate(zip(items, options, strict=True)):
        rows += [(item, value, i * (k + 3) + j) for j, value in enumerate(opts.values)]
        rows += [(item, word, i * (k + 3) + k + j) for j, word in enumerate(NONSUB)]
    return pd.DataFrame(rows, columns=["item", "key", "slot"])


def _masses(
    side: SideAnswers, items: list[str], options: list[OptionSet], k: int
) -> tuple[np.ndarray, pd.Index, np.ndarray]:
    """``(clusters, items, k + 3)`` masses, the cluster ids and each item's answering clusters;
    an answer outside its item's options is an error naming the file and line."""
    clusters = pd.Index(side.cluster.unique())
    f = side.frame[side.frame["item"].isin(items)]
    f = f.merge(_slots(items, options, k), on=["item", "key"], how="left")
    bad = f[f["slot"].isna()]
    if len(bad):
        line, item, key = int(bad["line"].iloc[0]), bad["item"].iloc[0], bad["key"].iloc[0]
        opts = options[items.index(item)]
        at = f"{side.path}, line {line}: field 'response'" if line else str(side.path)
        raise PsymError(
            f"{at}: item '{item}': {key!r} is not one of its options ({', '.join(opts.values)})"
        )
    rows = clusters.get_indexer(side.cluster.reindex(f["unit"]).to_numpy())
    out = np.zeros((len(clusters), len(items) * (k + 3)))
    np.add.at(out, (rows, f["slot"].to_numpy(dtype=int)), f["mass"].to_numpy(dtype=float))
    mass = out.reshape(len(clusters), len(items), k + 3)
    return mass, clusters, (mass.sum(axis=-1) > 0).sum(axis=0)


def align(
    model: SideAnswers,
    human: SideAnswers,
    instrument: Mapping[str, OptionSet] | None = None,
    scales: Mapping[str, tuple[str, ...]] | None = None,
    task: str | None = None,
) -> Aligned:
    """``model`` and ``human`` over the items both answered (see the module docstring)."""
    inst = dict(instrument or {})
    for side in (model, human):
        _check_items(side, inst, task if inst else None)
    declared = _declared(model, human, inst)
    order = list(inst) or list(dict.fromkeys(human.frame["item"]))
    m_items, h_items = set(model.frame["item"]), set(human.frame["item"])
    items = [it for it in dict.fromkeys([*order, *model.frame["item"]]) if it in m_items & h_items]
    if not items:
        raise PsymError(
            f"{model.path} and {human.path} have no item in common "
            f"(model: {', '.join(sorted(m_items))[:120]}; human: "
            f"{', '.join(sorted(h_items))[:120]})"
        )
    options = [declared.get(it) or _inferred(it, (model, human)) for it in items]
    k = max(len(o.values) for o in options)
    positions = np.array(
        [list(o.positions) + [o.positions[-1]] * (k - len(o.values)) for o in options]
    )
    valid = np.array([[j < len(o.values) for j in range(k)] for o in options])
    mm, mu, mn = _masses(model, items, options, k)
    hm, hu, hn = _masses(human, items, options, k)
    return Aligned(
        items=items,
        options=options,
        positions=positions,
        valid=valid,
        model=mm,
        human=hm,
        model_units=mu,
        human_units=hu,
        model_labels=model.labels.reindex(mu),
        human_labels=human.labels.reindex(hu),
        scales=_scales(items, scales or model.scales),
        model_n=mn,
        human_n=hn,
        not_compared=_not_compared(model, human, m_items, h_items),
    )


def _scales(items: list[str], of: Mapping[str, tuple[str, ...]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in items:
        for scale in of.get(item, ()):
            out.setdefault(scale, []).append(item)
    return out


def _not_compared(
    model: SideAnswers, human: SideAnswers, m_items: set[str], h_items: set[str]
) -> dict[str, str]:
    out = {it: f"only in {human.path}" for it in sorted(h_items - m_items)}
    out.update({it: f"only in {model.path}" for it in sorted(m_items - h_items)})
    return out
