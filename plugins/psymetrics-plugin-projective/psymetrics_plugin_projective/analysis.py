"""Reliability, responsiveness and validity of projective (and questionnaire) diagnoses.

Reads the ``results.json`` of runs whose cells vary ``persona=FILE`` and a perturbation
(``framing=…``, ``longctx=…``) and reports, per test and target (Big Five, MBTI, depression,
suicide ideation), following Wang et al. (2026) §5.3-5.4:

- against the neutral cell of the same persona, judge and test: pooled linearly-weighted κ,
  DCR with its direction and the mean shift μΔ with a bootstrap interval;
- against a labels file: exact-match accuracy (Big Five pooled over the five dimensions),
  mean MBTI Hamming distance, and the majority-class baseline on the same targets;
- with two judges: their agreement (exact share and κ) on the same cells.

Every repeat of a run with ``--repeats`` is analysed (paired with the same repeat of the
neutral cell) and each statistic's spread across repeats is reported (``Spread``: mean, SD,
min, max). Questionnaire profiles below the authors' minimum of answered items are left out
with their reason (``Excluded``). ``unparsed="authors"`` fills unparsed diagnoses with the
defaults of the authors' code (``AUTHORS_DEFAULTS``) to reproduce their numbers; the default
``"missing"`` leaves them missing.

Diagnoses are the ``dx.*`` scores the projective tasks write; a run is keyed by its persona
facet (the persona file's stem) and the rest of its facets (``neutral`` when none). Reading
them and the authors' rules for questionnaire baselines live in ``predictions`` (re-exported
here).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from psymetrics_core.api import PsymError

from .drift import (
    Stat,
    directional_consistency,
    exact_accuracy,
    judge_agreement,
    linear_kappa,
    mbti_hamming,
    mean_shift,
)
from .findings import Agreement, Excluded, Prediction, Reliability, Report, Spread, Validity
from .labels import TargetLabels
from .metrics import all_correct, axis_accuracy, macro_f1, mae, type_accuracy
from .predictions import (
    AUTHORS_DEFAULTS,
    MAX_REPEATS,
    MIN_ANSWERED,
    NEUTRAL,
    UNPARSED,
    below_minimum,
    load_predictions,
    predictions_from_results,
    questionnaire_levels,
    substitute_unparsed,
)

__all__ = [
    "NEUTRAL",
    "FAMILIES",
    "MIN_ANSWERED",
    "UNPARSED",
    "AUTHORS_DEFAULTS",
    "MAX_BOOT",
    "MAX_REPEATS",
    "Prediction",
    "Reliability",
    "Validity",
    "Agreement",
    "Excluded",
    "Spread",
    "Report",
    "load_predictions",
    "predictions_from_results",
    "below_minimum",
    "questionnaire_levels",
    "substitute_unparsed",
    "analyse",
]

FAMILIES: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "big_five": (("O", "C", "E", "A", "N"), (1, 2, 3, 4, 5)),
    "mbti": (("EI", "SN", "TF", "JP"), (0, 1)),
    "depression": (("depression",), (0, 1, 2, 3)),
    "suicide": (("suicide",), (0, 1, 2, 3)),
}
_LETTERS = {"EI": "EI", "SN": "SN", "TF": "TF", "JP": "JP"}
MAX_BOOT = 100_000  # upper bound of bootstrap resamples (--n-boot)


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


Cells = dict[tuple[str, str, str, int], dict[str, Prediction]]


def analyse(
    predictions: Sequence[Prediction],
    labels: Mapping[str, TargetLabels] | None = None,
    *,
    baseline: str = NEUTRAL,
    n_boot: int = 2000,
    seed: int = 0,
    unparsed: str = "missing",
) -> Report:
    """Reliability against ``baseline``, validity against ``labels`` and judge agreement, for
    every repeat (paired with the same repeat of ``baseline``), and their spread over repeats.

    ``unparsed``: ``"missing"`` (default) leaves an unparsed diagnosis out (wrong where hits
    are counted); ``"authors"`` fills it with ``AUTHORS_DEFAULTS`` as the authors' code does.
    Questionnaire profiles below the authors' minimum answered are left out (``excluded``).
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or not 1 <= n_boot <= MAX_BOOT:
        raise PsymError(f"--n-boot {n_boot!r}: expected an integer 1-{MAX_BOOT}"[:300])
    preds = substitute_unparsed(predictions, unparsed)
    report = Report(n_predictions=len(preds), unparsed=unparsed)
    report.n_substituted = sum(len(p.substituted) for p in preds)
    report.excluded = [
        Excluded(p.source, p.task, p.persona, p.condition, p.repeat, p.invalid)
        for p in preds
        if p.invalid
    ]
    cells: Cells = {}
    for p in preds:
        if not p.invalid:
            cells.setdefault((p.judge, p.task, p.condition, p.repeat), {})[p.persona] = p
    report.repeats = sorted({r for *_, r in cells})
    for (judge, task, cond, rep), cell in sorted(cells.items()):
        base = cells.get((judge, task, baseline, rep))
        for family, (dims, levels) in FAMILIES.items():
            if not any(d in p.values for p in cell.values() for d in dims):
                continue
            if base is not None and cond != baseline:
                common = sorted(set(cell) & set(base))
                b, q = _vector(base, common, dims), _vector(cell, common, dims)
                report.reliability.append(
                    Reliability(
                        judge,
                        task,
                        family,
                        cond,
                        len(common),
                        linear_kappa(b, q, levels),
                        directional_consistency(b, q),
                        mean_shift(b, q, n_boot=n_boot, seed=seed),
                        rep,
                    )
                )
            if labels:
                report.validity += _validity(judge, task, family, cond, rep, cell, labels)
    report.agreement = _agreement(cells)
    report.spread = _spreads(report)
    report.notes += _notes(cells, report, baseline)
    return report


def _notes(cells: Cells, report: Report, baseline: str) -> list[str]:
    notes = []
    perturbed = {(t, r) for (_, t, c, r) in cells if c != baseline}
    have = {(t, r) for (_, t, c, r) in cells if c == baseline}
    missing = sorted({t for t, r in perturbed - have})
    if missing:
        notes.append(f"no '{baseline}' cell for {', '.join(missing)}: no reliability")
    if report.unparsed == "authors":
        notes.append(
            f"unparsed diagnoses: authors' defaults (Big Five 3, MBTI E/S/T/J, depression and "
            f"suicide 0) substituted for {report.n_substituted} value(s)"
        )
    else:
        n = sum(
            v is None
            for cell in cells.values()
            for p in cell.values()
            if p.origin == "diagnosis"
            for v in p.values.values()
        )
        notes.append(f"unparsed diagnoses: counted as missing ({n} value(s))")
    if report.excluded:
        notes.append(
            f"{len(report.excluded)} questionnaire profile(s) below the authors' minimum "
            f"answered left out"
        )
    return notes


def _validity(
    judge: str,
    task: str,
    family: str,
    cond: str,
    rep: int,
    preds: Mapping[str, Prediction],
    labels: Mapping[str, TargetLabels],
) -> list[Validity]:
    """Accuracy (MBTI: Hamming) and the authors' extra metrics, each with the in-sample
    majority guess (each dimension's most common label) scored the same way."""
    personas = sorted(p for p in preds if p in labels)
    if not personas:
        return []

    def row(metric: str, value: Stat, majority: Stat) -> Validity:
        return Validity(judge, task, family, cond, metric, value, majority, rep)

    dims, classes = FAMILIES[family]
    if family == "mbti":
        types = [labels[p].mbti for p in personas]
        if not any(types):
            return []
        guess = [_mbti(preds[p].values) for p in personas]
        fixed = [_majority_type(types)] * len(types)
        ax, ax_major = axis_accuracy(guess, types), axis_accuracy(fixed, types)
        return [
            row("hamming", mbti_hamming(guess, types), mbti_hamming(fixed, types)),
            row("type_acc", type_accuracy(guess, types), type_accuracy(fixed, types)),
            *(row(f"axis_acc.{a}", ax[a], ax_major[a]) for a in ax),
        ]
    truth = [[_truth(labels[p], family, d) for d in dims] for p in personas]
    if all(x is None for t in truth for x in t):
        return []
    modes = [_mode([t[i] for t in truth]) for i in range(len(dims))]
    pv = [[preds[p].values.get(d) for d in dims] for p in personas]
    flat_t = [x for t in truth for x in t]
    flat_p = [x for v in pv for x in v]
    flat_m = modes * len(personas)
    out = [
        row("accuracy", exact_accuracy(flat_p, flat_t), exact_accuracy(flat_m, flat_t)),
        row("macro_f1", macro_f1(flat_p, flat_t, classes), macro_f1(flat_m, flat_t, classes)),
        row("mae", mae(flat_p, flat_t), mae(flat_m, flat_t)),
    ]
    if family == "big_five":
        out.append(row("all_five", all_correct(pv, truth), all_correct([modes] * len(pv), truth)))
    return out


def _truth(label: TargetLabels, family: str, dim: str) -> int | None:
    if family == "big_five":
        return label.big_five.get(dim)
    return label.depression if family == "depression" else label.suicide


def _mode(values: Sequence[int | None]) -> int | None:
    """The most common known value (the in-sample majority guess); None without any."""
    known = [v for v in values if v is not None]
    return Counter(known).most_common(1)[0][0] if known else None


def _majority_type(truth: Sequence[str | None]) -> str | None:
    """The per-axis majority type of the known true types (in-sample)."""
    known = [t for t in truth if t]
    if not known:
        return None
    return "".join(Counter(t[i] for t in known).most_common(1)[0][0] for i in range(4))


def _agreement(cells: Cells) -> list[Agreement]:
    judges = sorted({j for j, *_ in cells})
    out: list[Agreement] = []
    if len(judges) < 2:
        return out
    a, b = judges[0], judges[1]
    for (judge, task, cond, rep), preds in sorted(cells.items()):
        other = cells.get((b, task, cond, rep))
        if judge != a or other is None:
            continue
        common = sorted(set(preds) & set(other))
        for family, (dims, levels) in FAMILIES.items():
            x, y = _vector(preds, common, dims), _vector(other, common, dims)
            if all(v is None for v in x + y):
                continue
            agree = judge_agreement(x, y, levels)
            out.append(
                Agreement(task, family, cond, (a, b), agree["exact"], agree["kappa_linear"], rep)
            )
    return out


StatKey = tuple[str, str, str, str, str]  # judge, task, target, condition, metric


def _statistics(report: Report) -> Iterable[tuple[StatKey, int, float | None]]:
    """(judge, task, target, condition, metric), repeat and value of every statistic."""
    for r in report.reliability:
        j, t, tg, c = r.judge, r.task, r.target, r.condition
        yield (j, t, tg, c, "kappa"), r.repeat, r.kappa.value
        yield (j, t, tg, c, "dcr"), r.repeat, r.dcr.value
        yield (j, t, tg, c, "mu_delta"), r.repeat, r.shift.mean
        yield (j, t, tg, c, "abs_mu_delta"), r.repeat, r.shift.abs_mean
    for v in report.validity:
        yield (v.judge, v.task, v.target, v.condition, v.metric), v.repeat, v.value.value
    for g in report.agreement:
        pair = " vs ".join(g.judges)
        yield (pair, g.task, g.target, g.condition, "agreement_exact"), g.repeat, g.exact.value
        yield (pair, g.task, g.target, g.condition, "agreement_kappa"), g.repeat, g.kappa.value


def _spreads(report: Report) -> list[Spread]:
    """Each statistic's mean, SD (ddof 1), min and max over repeats (cells with > 1 repeat)."""
    groups: dict[StatKey, dict[int, float | None]] = {}
    for key, rep, value in _statistics(report):
        groups.setdefault(key, {})[rep] = value
    out = []
    for key, by_rep in groups.items():
        if len(by_rep) < 2:
            continue
        vals = [v for v in by_rep.values() if v is not None]
        n, k = len(by_rep), len(vals)
        if not vals:
            out.append(Spread(*key, n, 0, None, None, None, None, "undefined in every repeat"))
            continue
        sd = statistics.stdev(vals) if k >= 2 else None
        reason = None if k >= 2 else "defined in one repeat only: no SD"
        if reason is None and k < n:
            reason = f"undefined in {n - k} of {n} repeats (left out)"
        out.append(Spread(*key, n, k, statistics.fmean(vals), sd, min(vals), max(vals), reason))
    return out
