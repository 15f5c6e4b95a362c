"""Fidelity per human subgroup, and steerability (Santurkar et al., 2023): for each value of a
human group column, the whole model's representativeness to that group, the representativeness
of the personas labelled with the same value (steered toward the group), their difference, and
the human between-group baseline (the other groups' humans against this group)."""

from __future__ import annotations

import numpy as np

from psymetrics_core.analysis.fidelity import boot
from psymetrics_core.analysis.fidelity.records import Aligned, Estimate, GroupFidelity
from psymetrics_core.base.errors import PsymError

__all__ = ["group_rows", "MAX_GROUPS"]

MAX_GROUPS = 30  # values of one group column


def _overall(
    p: np.ndarray, q: np.ndarray, p_reps: np.ndarray, q_reps: np.ndarray, al: Aligned
) -> tuple[float, np.ndarray, float, np.ndarray]:
    """Representativeness and SimBench score, point and replicates."""
    idx = range(len(al.items))
    a = boot.item_arrays(p.sum(axis=0), q.sum(axis=0), al.positions, al.valid)
    pt = boot.aggregate(a, idx, boot.norm(a))
    if not len(p_reps):
        return float(pt.representativeness), np.array([]), float(pt.simbench), np.array([])
    r = boot.item_arrays(p_reps, q_reps, al.positions, al.valid)
    rs = boot.aggregate(r, idx, boot.norm(r))
    return float(pt.representativeness), rs.representativeness, float(pt.simbench), rs.simbench


def _est(point: float, reps: np.ndarray, reason: str) -> Estimate:
    return boot.estimate(point, reps if reps.size else None, reason)


def group_rows(
    al: Aligned,
    column: str,
    n_boot: int,
    rng: np.random.Generator,
    *,
    human_name: str,
    model_name: str,
    model_resampled: bool,
    human_resampled: bool,
) -> list[GroupFidelity]:
    """One row per value of the human group ``column`` (see the module docstring)."""
    if column not in al.human_labels.columns:
        have = ", ".join(al.human_labels.columns) or "none"
        raise PsymError(f"{human_name}: --group {column}: no such column (columns: {have})")
    hv = al.human_labels[column].fillna("").astype(str)
    values = sorted(v for v in hv.unique() if v)
    if len(values) > MAX_GROUPS:
        raise PsymError(
            f"{human_name}: --group {column}: {len(values)} distinct values; a group "
            f"column names at most {MAX_GROUPS} groups"
        )
    steer = column in al.model_labels.columns
    mv = al.model_labels[column].fillna("").astype(str) if steer else None
    m_reps = boot.draw(al.model, n_boot, rng, model_resampled)
    out = []
    for v in values:
        mask = (hv == v).to_numpy()
        hg, ho = al.human[mask], al.human[~mask]
        hg_reps = boot.draw(hg, n_boot, rng, human_resampled)
        all_r, all_rr, all_s, all_sr = _overall(al.model, hg, m_reps, hg_reps, al)
        oth_r, oth_rr = np.nan, np.array([])
        if ho.shape[0]:
            ho_reps = boot.draw(ho, n_boot, rng, human_resampled)
            oth_r, oth_rr, _, _ = _overall(ho, hg, ho_reps, hg_reps, al)
        n_model = 0 if mv is None else int((mv == v).sum())
        st_r, st_rr, st_s, st_sr = np.nan, np.array([]), np.nan, np.array([])
        if mv is not None and n_model:
            ms = al.model[(mv == v).to_numpy()]
            ms_reps = boot.draw(ms, n_boot, rng, model_resampled)
            st_r, st_rr, st_s, st_sr = _overall(ms, hg, ms_reps, hg_reps, al)
        why_st = (
            f"{model_name}: no persona carries the label {column} = {v}"
            if steer
            else f"{model_name}: its respondents carry no label '{column}'"
        )
        gain_reps = st_rr - all_rr if st_rr.size and all_rr.size else np.array([])
        out.append(
            GroupFidelity(
                column=column,
                value=v,
                n_human=int(mask.sum()),
                n_model=n_model,
                model_all=_est(all_r, all_rr, "no compared item has a defined distance"),
                model_steered=_est(st_r, st_rr, why_st),
                steer_gain=_est(st_r - all_r, gain_reps, why_st),
                human_others=_est(oth_r, oth_rr, f"no human outside {column} = {v}"),
                simbench_all=_est(all_s, all_sr, "SimBench's normaliser is 0 for this group"),
                simbench_steered=_est(st_s, st_sr, why_st),
            )
        )
    return out
