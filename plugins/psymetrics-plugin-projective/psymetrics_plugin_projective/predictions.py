"""The diagnoses of runs as ``Prediction`` records, under the authors' rules.

Reads the ``dx.*`` scores the projective tasks write in ``results.json`` (one ``Prediction``
per task, cell and repeat, keyed by the persona facet and the rest of the facets, ``neutral``
when none); a questionnaire task without them gives its baseline levels by the authors' rules
(Wang et al. 2026 §5.2), and a profile below the authors' minimum of answered items is marked
``invalid`` with its reason. ``substitute_unparsed`` fills unparsed diagnoses with the
authors' defaults when asked. ``analysis.analyse`` computes the statistics over them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from psymetrics_core.api import PsymError, load_run_data

from .findings import Prediction

__all__ = [
    "NEUTRAL",
    "MIN_ANSWERED",
    "UNPARSED",
    "AUTHORS_DEFAULTS",
    "MAX_REPEATS",
    "load_predictions",
    "predictions_from_results",
    "questionnaire_levels",
    "below_minimum",
    "substitute_unparsed",
]

NEUTRAL = "neutral"
# The authors' minimum of parsed items per questionnaire, (minimum, items): below it the
# persona is dropped for the task (scripts/evaluate_questionnaire.py; extraction notes §9.2).
MIN_ANSWERED: dict[str, tuple[int, int]] = {
    "bfi": (30, 44),
    "pb-bfi": (30, 44),
    "16p": (40, 60),
    "bdi2": (15, 21),
    "bss": (13, 19),
}
# How an unparsed diagnosis counts: "missing" (default) or the authors' defaults.
UNPARSED = ("missing", "authors")
# The authors' parsers' defaults (genpt/pipeline/batch_runner.py, extraction notes §7.2): Big
# Five 3 per trait, MBTI "XXXX" decoded as E, S, T, J (axis value 0), depression and suicide 0.
AUTHORS_DEFAULTS: dict[str, int] = {
    "O": 3,
    "C": 3,
    "E": 3,
    "A": 3,
    "N": 3,
    "EI": 0,
    "SN": 0,
    "TF": 0,
    "JP": 0,
    "depression": 0,
    "suicide": 0,
}
MAX_REPEATS = 10_000  # a run's repeat index must be below this


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


_BFI = {
    "O": "openness",
    "C": "conscientiousness",
    "E": "extraversion",
    "A": "agreeableness",
    "N": "neuroticism",
}
# 16p scales run 0-100 toward E, N, T, J; axis value above 50, below 50, at 50 (0 = E, S, T, J).
# Ties go to I, N, F, J as in the authors' 16P scoring.
_16P = {
    "EI": ("extraverted", 0, 1, 1),
    "SN": ("intuitive", 1, 0, 1),
    "TF": ("thinking", 0, 1, 1),
    "JP": ("judging", 0, 1, 0),
}


# key-only baselines: scale, upper bound of levels 0, 1, 2 (3 above)
_SUM_BANDS = {
    "bdi2": ("depression", (13, 19, 28, 63)),  # BDI-II manual cut-offs (Beck et al. 1996)
    "bss": ("ideation", (3, 8, 16, 38)),  # the authors' code; no standard banding exists
}


def below_minimum(task: str, n_answered: Any) -> str | None:
    """Why a questionnaire profile is left out under the authors' rule, or None when it counts.

    The authors keep a persona for a task only with at least ``MIN_ANSWERED[task]`` items
    parsed (BFI 30 of 44, 16P 40 of 60, BDI-II 15 of 21, BSS 13 of 19); other tasks: None.
    """
    if task not in MIN_ANSWERED:
        return None
    minimum, n_items = MIN_ANSWERED[task]
    if isinstance(n_answered, bool) or not isinstance(n_answered, int):
        return (
            f"no answered-item count in the record (the authors' rule needs at least "
            f"{minimum} of {n_items} items answered)"
        )
    if not 0 <= n_answered <= n_items:
        return f"answered-item count {n_answered} is outside 0-{n_items}"[:300]
    if n_answered < minimum:
        return (
            f"{n_answered} of {n_items} items answered, below the authors' minimum of "
            f"{minimum} (Wang et al. 2026 code)"
        )
    return None


def questionnaire_levels(task: str, scales: Mapping[str, Any]) -> dict[str, float | None]:
    """Questionnaire baselines as diagnoses (Wang et al. 2026 §5.2, the authors' rules).

    BFI (``bfi``, ``pb-bfi``): each trait's item mean rounded half-to-even (Python ``round``,
    as the authors' code) to a level 1-5. BDI-II / BSS (``bdi2``, ``bss``): the item sum banded
    into levels 0-3 when at least 15 / 13 items were answered. 16Personalities (``16p``): a
    letter per axis from its 0-100 score (toward E, N, T, J), ties to I, N, F, J (the authors'
    tie rule). The minimum of answered items of the whole questionnaire (``below_minimum``)
    is applied by ``predictions_from_results``.
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
        scale, bands = _SUM_BANDS[task]
        cell = scales.get(scale)
        answered = cell.get("n_answered") if isinstance(cell, dict) else None
        v = score(scale)
        target = "depression" if task == "bdi2" else "suicide"
        if v is None or below_minimum(task, answered):
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
    """One ``Prediction`` per (task, cell, repeat) with ``dx.*`` scores or baseline levels.

    A questionnaire administration below the authors' minimum of answered items becomes a
    ``Prediction`` with ``invalid`` set (its reason) and no values.
    """
    judge = _judge_name(results)
    out: list[Prediction] = []
    for task, entry in (results.get("tasks") or {}).items():
        for run in entry.get("runs") or [entry]:
            pred = _prediction(task, run, judge, source)
            if pred is not None:
                out.append(pred)
    return out


def _prediction(task: str, run: Mapping[str, Any], judge: str, source: str) -> Prediction | None:
    scales = run.get("scales") or {}
    dx = {
        k[3:]: scales[k].get("score")
        for k in scales
        if k.startswith("dx.")
        and not str(scales[k].get("reason") or "").startswith("not requested")
    }
    origin, invalid = "diagnosis", None
    if not dx:
        dx, origin = questionnaire_levels(task, scales), "questionnaire"
        invalid = below_minimum(task, run.get("n_answered")) if dx else None
    if not dx:
        return None
    facets = dict(run.get("facets") or {})
    persona = facets.pop("persona", "persona=(none)").partition("=")[2] or "(none)"
    condition = "+".join(facets[k] for k in sorted(facets)) or NEUTRAL
    values = {k: (None if v is None or invalid else int(round(float(v)))) for k, v in dx.items()}
    repeat = run.get("repeat") or 0
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 0 <= repeat < MAX_REPEATS:
        where = f"{source}/results.json" if source else "results.json"
        raise PsymError(
            f"{where}: field 'tasks.{task}.runs.repeat': expected an integer 0-{MAX_REPEATS - 1},"
            f" got {repeat!r}"[:300]
        )
    return Prediction(source, task, persona, condition, judge, repeat, values, origin, invalid)


def substitute_unparsed(predictions: Sequence[Prediction], unparsed: str) -> list[Prediction]:
    """``unparsed="authors"``: each missing diagnosis (not questionnaire) value filled with
    ``AUTHORS_DEFAULTS``, its dimensions kept in ``substituted``; ``"missing"``: unchanged."""
    if unparsed not in UNPARSED:
        raise PsymError(f"--unparsed {unparsed!r}: expected one of {', '.join(UNPARSED)}"[:300])
    if unparsed == "missing":
        return list(predictions)
    out = []
    for p in predictions:
        gaps = tuple(k for k, v in p.values.items() if v is None and k in AUTHORS_DEFAULTS)
        if p.origin == "diagnosis" and gaps:
            filled = {**p.values, **{k: AUTHORS_DEFAULTS[k] for k in gaps}}
            p = replace(p, values=filled, substituted=gaps)
        out.append(p)
    return out
