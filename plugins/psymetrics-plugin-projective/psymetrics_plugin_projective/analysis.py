"""Reliability, responsiveness and validity of projective (and questionnaire) diagnoses.

Reads the ``results.json`` of runs whose cells vary ``persona=FILE`` and a perturbation
(``framing=…``, ``longctx=…``) and reports, per test and target (Big Five, MBTI, depression,
suicide ideation), following Wang et al. (2026) §5.3-5.4:

- against the neutral cell of the same persona, judge and test: pooled linearly-weighted κ,
  DCR with its direction and the mean shift μΔ with a bootstrap interval;
- against a labels file: exact-match accuracy (Big Five pooled over the five dimensions),
  mean MBTI Hamming distance, and the majority-class baseline on the same targets;
- with two judges: their agreement (exact share and κ) on the same cells.

Diagnoses are the ``dx.*`` scores the projective tasks write; a run is keyed by its persona
facet (the persona file's stem) and the rest of its facets (``neutral`` when none).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from psymetrics_core.analysis.drift import (
    DCR,
    Shift,
    Stat,
    directional_consistency,
    exact_accuracy,
    judge_agreement,
    linear_kappa,
    mbti_hamming,
    mean_shift,
)
from psymetrics_core.base.errors import PsymError
from psymetrics_core.records.read import load_run_data

from .labels import TargetLabels

__all__ = [
    "FAMILIES",
    "Prediction",
    "Reliability",
    "Validity",
    "Agreement",
    "Report",
    "load_predictions",
    "predictions_from_results",
    "analyse",
]

NEUTRAL = "neutral"
FAMILIES: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "big_five": (("O", "C", "E", "A", "N"), (1, 2, 3, 4, 5)),
    "mbti": (("EI", "SN", "TF", "JP"), (0, 1)),
    "depression": (("depression",), (0, 1, 2, 3)),
    "suicide": (("suicide",), (0, 1, 2, 3)),
}
_LETTERS = {"EI": "EI", "SN": "SN", "TF": "TF", "JP": "JP"}


@dataclass(frozen=True)
class Prediction:
    """The diagnoses of one (run directory, task, persona, condition, judge) cell."""

    source: str
    task: str
    persona: str
    condition: str
    judge: str
    repeat: int
    values: dict[str, int | None]


@dataclass(frozen=True)
class Reliability:
    """One perturbed condition against neutral for a (judge, task, target)."""

    judge: str
    task: str
    target: str
    condition: str
    n_targets: int
    kappa: Stat
    dcr: DCR
    shift: Shift


@dataclass(frozen=True)
class Validity:
    """Accuracy (or MBTI Hamming distance) of one condition against ground truth."""

    judge: str
    task: str
    target: str
    condition: str
    metric: str
    value: Stat
    majority: Stat


@dataclass(frozen=True)
class Agreement:
    """Agreement of two judges on the same cells of a task and target."""

    task: str
    target: str
    condition: str
    judges: tuple[str, str]
    exact: Stat
    kappa: Stat


@dataclass
class Report:
    """Everything ``analyse`` computes."""

    reliability: list[Reliability] = field(default_factory=list)
    validity: list[Validity] = field(default_factory=list)
    agreement: list[Agreement] = field(default_factory=list)
    n_predictions: int = 0
    notes: list[str] = field(default_factory=list)


def load_predictions(run_dirs: Sequence[str | Path]) -> list[Prediction]:
    """The diagnoses in the ``results.json`` of each run directory."""
    out: list[Prediction] = []
    for d in run_dirs:
        path = Path(d) / "results.json" if Path(d).is_dir() else Path(d)
        if not path.is_file():
            raise PsymError(f"{d}: no results.json (give run directories written by psym eval)")
        # the one run reader (strict JSON, bounded and typed fields, samples checked)
        data = load_run_data(path.parent).results
        out += predictions_from_results(data, str(path.parent))
    return out


def _judge_name(results: Mapping[str, Any]) -> str:
    judge = results.get("judge")
    if not isinstance(judge, dict):
        return str(results.get("model", "?"))
    args = judge.get("model_args") or {}
    model = args.get("model") or args.get("pretrained") or ""
    return f"{judge.get('model')}" + (f":{model}" if model else "")


_BFI = {"O": "openness", "C": "conscientiousness", "E": "extraversion",
        "A": "agreeableness", "N": "neuroticism"}  # fmt: skip
# 16p scales run 0-100 toward E, N, T, J; axis value above 50, below 50, at 50 (0 = E, S, T, J).
# Ties go to I, N, F, J as in the authors' 16P scoring.
_16P = {"EI": ("extraverted", 0, 1, 1), "SN": ("intuitive", 1, 0, 1),
        "TF": ("thinking", 0, 1, 1), "JP": ("judging", 0, 1, 0)}  # fmt: skip


# key-only baselines: scale, minimum answered items, upper bound of levels 0, 1, 2 (3 above)
_SUM_BANDS = {
    "bdi2": ("depression", 15, (13, 19, 28, 63)),  # BDI-II manual cut-offs (Beck et al. 1996)
    "bss": ("ideation", 13, (3, 8, 16, 38)),  # the authors' code; no standard banding exists
}


def questionnaire_levels(task: str, scales: Mapping[str, Any]) -> dict[str, float | None]:
    """Questionnaire baselines as diagnoses (Wang et al. 2026 §5.2, the authors' rules).

    BFI (``bfi``, ``pb-bfi``): each trait's item mean rounded half-to-even (Python ``round``,
    as the authors' code) to a level 1-5. BDI-II / BSS (``bdi2``, ``bss``): the item sum banded
    into levels 0-3 when at least 15 / 13 items were answered. 16Personalities (``16p``): a
    letter per axis from its 0-100 score (toward E, N, T, J), ties to I, N, F, J (the authors'
    tie rule).
    Other tasks: no diagnoses.
    """

    def score(name: str) -> float | None:
        cell = scales.get(name)
        value = cell.get("score") if isinstance(cell, dict) else None
        return None if value is None else float(value)

    if task in ("bfi", "pb-bfi"):
        out: dict[str, float | None] = {}
        for letter, trait in _BFI.items():
            v = score(trait)
            out[letter] = None if v is None else float(min(5, max(1, round(v))))
        return out
    if task in _SUM_BANDS:
        scale, minimum, bands = _SUM_BANDS[task]
        cell = scales.get(scale)
        answered = cell.get("n_answered") if isinstance(cell, dict) else None
        v = score(scale)
        target = "depression" if task == "bdi2" else "suicide"
        if v is None or answered is None or answered < minimum:
            return {target: None}
        return {target: float(next(level for level, top in enumerate(bands) if v <= top))}
    if task == "16p":
        axes: dict[str, float | None] = {}
        for axis, (name, above, below, tie) in _16P.items():
            v = score(name)
            axes[axis] = None if v is None else float(above if v > 50 else below if v < 50 else tie)
        return axes
    return {}


def predictions_from_results(results: Mapping[str, Any], source: str = "") -> list[Prediction]:
    """One ``Prediction`` per (task, cell, repeat) with ``dx.*`` scores or baseline levels."""
    judge = _judge_name(results)
    out: list[Prediction] = []
    for task, entry in (results.get("tasks") or {}).items():
        for run in entry.get("runs") or [entry]:
            scales = run.get("scales") or {}
            dx = {
                k[3:]: scales[k].get("score")
                for k in scales
                if k.startswith("dx.")
                and not str(scales[k].get("reason") or "").startswith("not requested")
            }
            dx = dx or questionnaire_levels(task, scales)
            if not dx:
                continue
            facets = dict(run.get("facets") or {})
            persona = facets.pop("persona", "persona=(none)").partition("=")[2] or "(none)"
            condition = "+".join(facets[k] for k in sorted(facets)) or NEUTRAL
            values = {k: (None if v is None else int(round(float(v)))) for k, v in dx.items()}
            out.append(
                Prediction(
                    source, task, persona, condition, judge, int(run.get("repeat") or 0), values
                )
            )
    return out


def _vector(
    preds: Mapping[str, Prediction], personas: Iterable[str], dims: Sequence[str]
) -> list[int | None]:
    return [preds[p].values.get(d) for p in personas for d in dims]


def _mbti(values: Mapping[str, int | None]) -> str | None:
    letters = []
    for ax in _LETTERS:
        v = values.get(ax)
        if v not in (0, 1):
            return None
        letters.append(ax[v or 0])
    return "".join(letters)


def analyse(
    predictions: Sequence[Prediction],
    labels: Mapping[str, TargetLabels] | None = None,
    *,
    baseline: str = NEUTRAL,
    n_boot: int = 2000,
    seed: int = 0,
) -> Report:
    """Reliability against ``baseline``, validity against ``labels`` and judge agreement."""
    report = Report(n_predictions=len(predictions))
    cells: dict[tuple[str, str, str], dict[str, Prediction]] = {}
    for p in predictions:
        if p.repeat:
            continue  # repeats beyond the first are not paired here
        cells.setdefault((p.judge, p.task, p.condition), {})[p.persona] = p
    for (judge, task, cond), preds in sorted(cells.items()):
        base = cells.get((judge, task, baseline))
        for family, (dims, levels) in FAMILIES.items():
            if not any(d in p.values for p in preds.values() for d in dims):
                continue
            if base is not None and cond != baseline:
                common = sorted(set(preds) & set(base))
                b, q = _vector(base, common, dims), _vector(preds, common, dims)
                report.reliability.append(
                    Reliability(
                        judge, task, family, cond, len(common),
                        linear_kappa(b, q, levels), directional_consistency(b, q),
                        mean_shift(b, q, n_boot=n_boot, seed=seed),
                    )
                )  # fmt: skip
            if labels:
                report.validity += _validity(judge, task, family, cond, preds, labels)
    report.agreement = _agreement(cells)
    perturbed = {t for (_, t, c) in cells if c != baseline}
    missing = sorted(perturbed - {t for (_, t, c) in cells if c == baseline})
    if missing:
        report.notes.append(f"no '{baseline}' cell for {', '.join(missing)}: no reliability")
    return report


def _validity(
    judge: str,
    task: str,
    family: str,
    cond: str,
    preds: Mapping[str, Prediction],
    labels: Mapping[str, TargetLabels],
) -> list[Validity]:
    personas = sorted(p for p in preds if p in labels)
    if not personas:
        return []
    dims, _ = FAMILIES[family]
    if family == "mbti":
        types = [labels[p].mbti for p in personas]
        if not any(types):
            return []
        guess = [_mbti(preds[p].values) for p in personas]
        ham = mbti_hamming(guess, types)
        return [Validity(judge, task, family, cond, "hamming", ham, _mbti_majority(types))]
    truth = {d: [_truth(labels[p], family, d) for p in personas] for d in dims}
    t = [truth[d][i] for i in range(len(personas)) for d in dims]
    if all(x is None for x in t):
        return []
    acc = exact_accuracy(_vector(preds, personas, dims), t)
    return [Validity(judge, task, family, cond, "accuracy", acc, _majority(truth))]


def _truth(label: TargetLabels, family: str, dim: str) -> int | None:
    if family == "big_five":
        return label.big_five.get(dim)
    return label.depression if family == "depression" else label.suicide


def _majority(truth_by_dim: Mapping[str, Sequence[int | None]]) -> Stat:
    """Pooled accuracy of predicting each dimension's most common true level (in-sample)."""
    hits = total = 0
    for values in truth_by_dim.values():
        known = [v for v in values if v is not None]
        if known:
            hits += Counter(known).most_common(1)[0][1]
            total += len(known)
    return Stat(hits / total, total) if total else Stat(None, 0, "no ground truth")


def _mbti_majority(truth: Sequence[str | None]) -> Stat:
    """Mean Hamming distance of the per-axis majority type (in-sample) to the true types."""
    known = [t for t in truth if t]
    if not known:
        return Stat(None, 0, "no ground truth")
    majority = "".join(Counter(t[i] for t in known).most_common(1)[0][0] for i in range(4))
    return mbti_hamming([majority] * len(known), known)


def _agreement(cells: Mapping[tuple[str, str, str], Mapping[str, Prediction]]) -> list[Agreement]:
    judges = sorted({j for j, _, _ in cells})
    out: list[Agreement] = []
    if len(judges) < 2:
        return out
    a, b = judges[0], judges[1]
    for (judge, task, cond), preds in sorted(cells.items()):
        other = cells.get((b, task, cond))
        if judge != a or other is None:
            continue
        common = sorted(set(preds) & set(other))
        for family, (dims, levels) in FAMILIES.items():
            x, y = _vector(preds, common, dims), _vector(other, common, dims)
            if all(v is None for v in x + y):
                continue
            agree = judge_agreement(x, y, levels)
            out.append(Agreement(task, family, cond, (a, b), agree["exact"], agree["kappa_linear"]))
    return out
