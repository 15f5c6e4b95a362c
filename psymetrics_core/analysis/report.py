"""Assemble the ``psym analyze`` report from run directories (no model calls)."""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from psymetrics_core.analysis import consistency as cons
from psymetrics_core.analysis import facets as fac
from psymetrics_core.analysis import mbti, norms, reliability, styles, validity
from psymetrics_core.analysis.records import DEFAULT_FACET, Run, load_runs, unit_scores
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import regular_file

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["analyze", "RESPONDENTS", "RESPONDENTS_POPULATION", "UNIT", "read_baseline"]

RESPONDENTS = (
    "respondents are administrations of one model (condition cells x seeded repeats), not "
    "people; alpha/omega describe how the scale's items co-vary across those administrations"
)

RESPONDENTS_POPULATION = (
    "the tables before the 'Population psychometrics' section are per cell (each respondent "
    "is one cell: an administration of one model under that persona); that section, at the "
    "end, treats the respondents as people (their spread, reliability and structure)"
)
POPULATION_SD = (
    "the other cells are other respondents): for the population's spread read the population "
    "section's variance ratios (the respondents' variance over the human norm's) instead"
)

UNIT = (
    "a unit is a model (its label, or backend plus model arguments), split by persona when a "
    "run varies one; its score is the mean over its administrations at the default level of "
    "every other facet"
)


def read_baseline(path: str | Path) -> pd.DataFrame:
    """Human consistency values: CSV with a ``consistency`` column (optional ``task``,
    ``condition``), one row per participant (Jung et al., 2026)."""
    p = Path(path)
    try:
        regular_file(p, "human baseline CSV")  # no directory, device, FIFO or /proc entry
    except OSError:
        raise PsymError(f"{p}: no such file") from None
    rows = []
    with p.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        if "consistency" not in (reader.fieldnames or []):
            raise PsymError(
                f"{p}, line 1: missing column 'consistency' (optional: task, condition)"
            )
        for line, row in enumerate(reader, start=2):
            try:
                value = float(row["consistency"])
            except (TypeError, ValueError):
                raise PsymError(
                    f"{p}, line {line}: consistency {row['consistency']!r} is not a number"
                ) from None
            if not 0 <= value <= 1:
                raise PsymError(f"{p}, line {line}: consistency {value} is outside 0..1")
            rows.append(
                {
                    "task": row.get("task") or None,
                    "condition": row.get("condition") or None,
                    "consistency": value,
                }
            )
    if not rows:
        raise PsymError(f"{p}: no rows")
    return pd.DataFrame(rows)


def analyze(
    paths: Sequence[str | Path],
    *,
    reference: str = "original",
    nan_policy: str = "match",
    baseline: str | Path | None = None,
    fence_k: float = 1.5,
    hypotheses: Sequence[str] = (),
    deletion: str = "listwise",
    session: Session,
) -> dict[str, Any]:
    """The full report for ``paths`` (run directories) as a JSON-able dict.

    ``deletion`` is alpha's handling of unanswered items (``--missing``): ``listwise``
    (complete administrations), ``pairwise`` or ``fiml`` (see ``reliability.cronbach_alpha``).
    The human norms and the scales named by ``hypotheses`` come from the instruments of
    ``session`` (a task that is not installed gets a ``norms`` note saying so).
    """
    if nan_policy not in cons.NAN_POLICIES:
        raise PsymError(f"--nan-policy must be one of {', '.join(cons.NAN_POLICIES)}")
    if deletion not in reliability.DELETION:
        raise PsymError(f"--missing must be one of {', '.join(reliability.DELETION)}")
    hyps = [validity.parse_hypothesis(h) for h in hypotheses]
    runs = load_runs(list(paths))
    base = read_baseline(baseline) if baseline else None
    report: dict[str, Any] = {
        "respondents": (
            RESPONDENTS_POPULATION if any("respondent" in r.facets for r in runs) else RESPONDENTS
        ),
        "nan_policy": nan_policy,
        "alpha_deletion": deletion,
        "missing": deletion,
        "reference_condition": reference,
        "runs": [_run_info(r) for r in runs],
        "analyses": {},
    }
    for run in runs:
        for task in sorted(run.items["task"].unique()) if not run.items.empty else []:
            items = run.items[run.items["task"] == task]
            scores = run.scores[run.scores["task"] == task]
            report["analyses"].setdefault(run.label, {})[task] = _task_report(
                run, task, items, scores, reference, nan_policy, base, fence_k, deletion, session
            )
    report["convergent_validity"] = _convergent(runs, hyps, session)
    return report


def _run_info(run: Run) -> dict[str, Any]:
    r = run.results
    return {
        "label": run.label,
        "path": str(run.path),
        "model": r.get("model"),
        "backend": (r.get("backend") or {}).get("pretrained") or r.get("model"),
        "tasks": sorted(r.get("tasks", {})),
        "conditions": r.get("conditions", ["original"]),
        "repeats": r.get("repeats", 1),
        "seeds": r.get("seeds", [r.get("seed")]),
        "temperature": (r.get("settings") or {}).get("temperature"),
        "facets": run.facets,
    }


def _task_report(
    run: Run,
    task: str,
    items: pd.DataFrame,
    scores: pd.DataFrame,
    reference: str,
    nan_policy: str,
    base: pd.DataFrame | None,
    fence_k: float,
    deletion: str,
    session: Session,
) -> dict[str, Any]:
    conditions = list(dict.fromkeys(items["condition"]))
    ref = reference if reference in conditions else conditions[0]
    out: dict[str, Any] = {"conditions": conditions, "reference": ref}
    out["consistency"] = _consistency(items, ref, nan_policy, base, task, fence_k)
    scored = items[items["scored"]]
    keyed = run.keyed[run.keyed["task"] == task] if not run.keyed.empty else run.keyed
    out["reliability"] = _reliability(keyed, deletion)
    out["icc"] = _icc(scored)
    out["response_styles"] = _styles(items, _agree_low_items(task, session))
    out["norms"] = _norms(task, scores, ref, session, population="respondent" in run.facets)
    out["mbti_metrics"] = _mbti(items, scores)
    out["facets"] = _facets(run, scores)
    return out


def _answers(frame: pd.DataFrame) -> dict[str, Any]:
    return {
        str(k): (None if pd.isna(v) else v)
        for k, v in zip(frame["item"], frame["answer"], strict=True)
    }


def _consistency(
    items: pd.DataFrame, ref: str, nan_policy: str, base: pd.DataFrame | None, task: str, k: float
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    per_item: dict[str, dict[str, list[float]]] = {}
    for repeat, grp in items.groupby("repeat"):
        ref_ans = _answers(grp[grp["condition"] == ref])
        for cond in dict.fromkeys(grp["condition"]):
            if cond == ref:
                continue
            other = _answers(grp[grp["condition"] == cond])
            ids = [i for i in ref_ans if i in other]
            m = cons.match_vector([ref_ans[i] for i in ids], [other[i] for i in ids], nan_policy)
            for i, v in zip(ids, m, strict=True):
                per_item.setdefault(cond, {}).setdefault(i, []).append(float(v))
            value = float(np.nanmean(m)) if np.any(~np.isnan(m)) else float("nan")
            seed = grp["seed"].iloc[0]
            rows.append(
                {
                    "condition": cond,
                    "repeat": int(repeat),
                    "seed": _py(seed),
                    "consistency": value,
                    "n_items": len(ids),
                }
            )
    out: dict[str, Any] = {"versus": ref, "per_seed": rows, "mean": {}, "per_item": {}}
    for cond in dict.fromkeys(r["condition"] for r in rows):
        vals = [r["consistency"] for r in rows if r["condition"] == cond]
        out["mean"][cond] = float(np.nanmean(vals)) if any(np.isfinite(vals)) else float("nan")
        out["per_item"][cond] = {i: float(np.nanmean(v)) for i, v in per_item[cond].items()}
    if base is not None:
        sel = base[(base["task"].isna()) | (base["task"] == task)]
        if not sel.empty:
            fences = cons.tukey_fences(sel["consistency"].tolist(), k)
            out["human_fences"] = fences
            for r in rows:
                c = r["consistency"]
                r["outside_fences"] = bool(c < fences["lower"] or c > fences["upper"])
    return out


def _matrix(keyed: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Administrations x items of ``scale``: the recorded keyed values (MRAT-centred where the
    scale is); an item unanswered in an administration is missing."""
    sub = keyed[keyed["scale"] == scale]
    admins = keyed[["condition", "repeat"]].drop_duplicates()
    mat = sub.pivot_table(
        index=["condition", "repeat"], columns="item", values="value", aggfunc="first"
    )
    return mat.reindex(pd.MultiIndex.from_frame(admins))


def _reliability(keyed: pd.DataFrame, deletion: str = "listwise") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if keyed.empty:
        return out
    for scale in dict.fromkeys(keyed["scale"]):
        mat = _matrix(keyed, scale).astype(float)
        alpha = reliability.cronbach_alpha(mat, deletion)
        distinct = int(len(mat.dropna().drop_duplicates()))
        out[scale] = {
            **alpha,
            "omega": reliability.mcdonald_omega(mat),
            "respondents": (
                f"{alpha['n']} of {len(mat)} administrations "
                f"({'complete' if deletion == 'listwise' else deletion})"
            ),
            "distinct_patterns": distinct,
        }
        if distinct < 3 and "note" not in alpha:
            # alpha and omega of two or fewer patterns are artefacts (0 or 1 by construction):
            # null with the reason, never a number beside "not informative"
            note = f"only {distinct} distinct answer patterns: alpha/omega are not informative"
            out[scale].update(alpha=None, ci95=None, note=note)
            out[scale]["omega"] = {**out[scale]["omega"], "omega": None, "note": note}
    return out


def _icc(scored: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for cond, grp in scored.groupby("condition", sort=False):
        if grp["repeat"].nunique() < 2:
            continue
        long = grp[["item", "repeat", "keyed"]].astype({"keyed": float})
        out[str(cond)] = reliability.icc(long, "item", "repeat", "keyed")
    return out


def _agree_low_items(task: str, session: Session | None) -> frozenset[str]:
    """Items of ``task`` whose response scale means agreement at its low end (spec ``agree:
    low``, e.g. 16p's 1 = agree): their answers are mirrored before the response styles, so
    acquiescence and agree rate keep their sign."""
    try:
        inst = session.get_instrument(task) if session is not None else None
    except PsymError:  # a task no installed plugin provides: its answers as recorded
        inst = None
    scales = getattr(inst, "response_scales", None) or {}
    low = {name for name, rs in scales.items() if rs.agree == "low"}
    return frozenset(it.id for it in getattr(inst, "items", ()) if it.response_scale in low)


def _styles(items: pd.DataFrame, agree_low: frozenset[str] = frozenset()) -> dict[str, Any]:
    per: list[dict[str, Any]] = []
    for (cond, repeat), grp in items.groupby(["condition", "repeat"], sort=False):
        ans = [
            None if pd.isna(a) else (lo + hi - float(a) if str(i) in agree_low else float(a))
            for a, i, lo, hi in zip(grp["answer"], grp["item"], grp["min"], grp["max"], strict=True)
        ]
        s = styles.response_styles(ans, list(grp["min"]), list(grp["max"]), list(grp["status"]))
        per.append({"condition": cond, "repeat": int(repeat), **s})
    keys = (
        "acquiescence",
        "agree_rate",
        "extreme",
        "midpoint",
        "straightlining",
        "modal_share",
        "refusal_rate",
        "invalid_rate",
    )
    mean: dict[str, dict[str, float]] = {}
    for cond in dict.fromkeys(p["condition"] for p in per):
        rows = [p for p in per if p["condition"] == cond]
        mean[cond] = {k: _nanmean([r[k] for r in rows]) for k in keys}
    return {"per_administration": per, "mean": mean}


def _nanmean(values: Sequence[float]) -> float:
    arr = np.asarray(values, dtype=float)
    return float(np.nanmean(arr)) if np.any(np.isfinite(arr)) else float("nan")


def _norms(
    task: str, scores: pd.DataFrame, ref: str, session: Session, population: bool = False
) -> dict[str, Any]:
    try:
        groups = norms.norm_groups(session.get_instrument(task))
    except PsymError:
        return {"note": f"instrument '{task}' is not installed; norms unavailable"}
    if not groups:
        return {"note": f"instrument '{task}' has no norms"}
    out: dict[str, Any] = {"caveat": norms.N_CAVEAT, "condition": ref, "scales": {}}
    sub = scores[scores["condition"] == ref]
    for scale, glist in groups.items():
        vals = sub.loc[sub["scale"] == scale, "score"].dropna().to_numpy(float)
        if vals.size == 0:
            continue
        m, n = float(vals.mean()), int(vals.size)
        total = int(scores.loc[scores["scale"] == scale, "score"].notna().sum())
        s = float(vals.std(ddof=1)) if n > 1 else None
        few = f"needs 2+ administrations of condition '{ref}' (has {n} of the run's {total}; " + (
            POPULATION_SD if population else "the other cells are other conditions): use --repeats"
        )
        rows = []
        for g in glist:
            row: dict[str, Any] = {
                "group": g,
                "model_mean": m,
                "model_sd": s,
                "model_n": n,
                "model_n_total": total,
            }
            if s is None:
                row["model_sd_note"] = few
            row.update(norms.z_and_percentile(m, g["mean"], g["sd"]))
            if g["n"] is None:
                row["hedges_g"] = {"note": "the norm group has no n"}
                row["psychobench_test"] = {"note": "the norm group has no n"}
            elif s is None:
                row["hedges_g"] = {"note": few}
                row["psychobench_test"] = {"note": few}
            else:
                row["hedges_g"] = norms.hedges_g(m, s, n, g["mean"], g["sd"], g["n"])
                row["psychobench_test"] = norms.psychobench_test(
                    m, s, n, g["mean"], g["sd"], g["n"]
                )
            rows.append(row)
        out["scales"][scale] = rows
    return out


def _pomp_vectors(items: pd.DataFrame, scores: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Scale scores per administration rescaled to 0-100 (wide: rows = (condition, repeat))."""
    wide = scores.pivot_table(
        index=["condition", "repeat"], columns="scale", values="score", aggfunc="first"
    ).dropna(axis=1)
    method = dict(zip(scores["scale"], scores["method"], strict=True))
    n_items = dict(zip(scores["scale"], scores["n_items"], strict=True))
    lo, hi = float(items["min"].min()), float(items["max"].max())
    for scale in wide.columns:
        k = float(n_items.get(scale) or 1) if method.get(scale) == "sum" else 1.0
        wide[scale] = [mbti.pomp(v, k * lo, k * hi) for v in wide[scale]]
    return wide, list(wide.columns)


def _mbti(items: pd.DataFrame, scores: pd.DataFrame) -> dict[str, Any]:
    wide, dims = _pomp_vectors(items, scores)
    out: dict[str, Any] = {"alpha": mbti.ALPHA, "dimensions": dims, "scale": "0-100 (POMP)"}
    if not dims:
        out["note"] = "no scale was scored in every administration"
        return out
    conds = list(dict.fromkeys(wide.index.get_level_values(0)))
    out["consistency"] = {c: mbti.consistency(wide.loc[c].to_numpy()) for c in conds}
    facet_of = _facet_levels(scores)
    opt = facet_of.get("option_order", {})
    fixed = [c for c in conds if opt.get(c, DEFAULT_FACET) == DEFAULT_FACET]
    shuffled = [c for c in conds if opt.get(c, DEFAULT_FACET) != DEFAULT_FACET]
    if fixed and shuffled:
        fx = np.vstack([wide.loc[c].to_numpy() for c in fixed])
        out["robustness"] = {c: mbti.robustness(fx, wide.loc[c].to_numpy()) for c in shuffled}
    subj = facet_of.get("subject", {})
    levels = [c for c in conds if subj.get(c, DEFAULT_FACET) != DEFAULT_FACET]
    if len(levels) >= 2:
        out["fairness"] = {
            f"{a} vs {b}": mbti.fairness(wide.loc[a].to_numpy(), wide.loc[b].to_numpy())
            for a, b in itertools.combinations(levels, 2)
        }
    return out


def _facet_levels(scores: pd.DataFrame) -> dict[str, dict[str, str]]:
    """facet -> {condition: level}."""
    out: dict[str, dict[str, str]] = {}
    for col in [c for c in scores.columns if c.startswith("facet:")]:
        pairs = scores[["condition", col]].drop_duplicates()
        out[col.split(":", 1)[1]] = dict(zip(pairs["condition"], pairs[col], strict=True))
    return out


def _facets(run: Run, scores: pd.DataFrame) -> dict[str, Any]:
    cols = [c for c in scores.columns if c.startswith("facet:")]
    frame = scores.copy()
    frame["facet:seed"] = frame["repeat"].astype(str)
    names = [*cols, "facet:seed"]
    out: dict[str, Any] = {}
    for scale, grp in frame.groupby("scale", sort=False):
        res = fac.decompose(grp, names)
        res["shares"] = {k.split(":", 1)[-1]: v for k, v in res["shares"].items()}
        res["facets"] = [f.split(":", 1)[1] for f in res["facets"]]
        out[str(scale)] = res
    return out


def _convergent(
    runs: Sequence[Run], hyps: list[validity.Hypothesis], session: Session
) -> dict[str, Any]:
    """Spearman's rho across units of analysis (``records.unit_scores``)."""
    units = unit_scores([(r.label, r.results) for r in runs])
    declared = bool(hyps)
    validity.check_hypotheses(hyps, list(dict.fromkeys(units["score_id"])), session)
    if units.empty or units["unit"].nunique() < 2:
        return {
            "note": "needs two or more units (models, or persona cells) with scores",
            "rows": [],
        }
    wide = units.pivot_table(index="unit", columns="score_id", values="score")
    if not hyps:
        hyps = [h for h in validity.DEFAULT_HYPOTHESES if h.a in wide and h.b in wide]
    exploratory = False
    if not hyps:
        exploratory = True
        hyps = [
            validity.Hypothesis(a, b, 0, "exploratory (no declared sign)")
            for a, b in itertools.combinations(wide.columns, 2)
        ]
    rows = []
    for h in hyps:
        if h.a not in wide or h.b not in wide:
            rows.append(
                {"a": h.a, "b": h.b, "expected": h.sign, "note": "score not in the runs analysed"}
            )
            continue
        res = validity.spearman_fisher(wide[h.a].tolist(), wide[h.b].tolist(), h.sign)
        rows.append({"a": h.a, "b": h.b, "expected": h.sign, "source": h.source, **res})
    return {
        "units": list(wide.index),
        "unit_of_analysis": UNIT,
        "declared": declared,
        "exploratory": exploratory,
        "rows": rows,
    }


def _py(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and math.isnan(x):
        return None
    return x
