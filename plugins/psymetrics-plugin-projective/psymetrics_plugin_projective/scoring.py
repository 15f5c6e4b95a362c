"""How a projective session's judge verdicts become its scores.

The kind (``kind.py``) runs the interpreter and diagnostician stages and stores their parsed
replies as ``Verdict``s (``coded_verdict``, ``dx_verdict``); the task's ``score`` reads them
back (``coded_from``, ``diagnosis_from``) and turns them into indicators, ``dx.*`` levels and
the judge parse counts (``session_scores``). Neither the kind nor the tasks module is imported
here, so both can import this module.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from psymetrics_core.api import Score, TaskResults, TaskScores, Verdict

from .coding import Coded
from .diagnosis import BIG_FIVE, MBTI_AXES, TARGETS, Diagnosis
from .interpret import Interpretation

__all__ = [
    "INTERPRETER",
    "coded_verdict",
    "dx_verdict",
    "coded_from",
    "diagnosis_from",
    "score_list",
    "session_scores",
]

INTERPRETER = "interpreter"


def coded_verdict(coded: Coded) -> Verdict:
    """An interpreter reply's codes as the ``Verdict`` the judge stage stores."""
    if coded.status != "ok":
        reason = coded.reason
    else:
        reason = f"missing: {', '.join(coded.missing)}" if coded.missing else None
    explanation: str | None
    if coded.explanations:
        explanation = json.dumps(coded.explanations, ensure_ascii=False)
    else:
        explanation = coded.analysis or None
    return Verdict(
        value={k: v for k, v in coded.values.items()},
        status=coded.status,
        reason=reason,
        explanation=explanation,
    )


def dx_verdict(d: Diagnosis) -> Verdict:
    """A diagnostician reply as the ``Verdict`` the judge stage stores (MBTI type as ``type``)."""
    value: dict[str, Any] = dict(d.values)
    if d.mbti_type:
        value["type"] = d.mbti_type
    return Verdict(value, d.status, d.reason, d.explanation or None)


def coded_from(v: Verdict) -> Coded:
    """The codes back from an interpreter ``Verdict``."""
    values = dict(v.value) if isinstance(v.value, dict) else {}
    missing = tuple(k for k, x in values.items() if x is None)
    explanations: dict[str, str] = {}
    if v.explanation and v.explanation.startswith("{"):
        try:
            explanations = dict(json.loads(v.explanation))
        except ValueError:
            explanations = {}
    return Coded(values, explanations, v.status, v.reason if v.status != "ok" else None, missing)


def diagnosis_from(target: str, v: Verdict | None, wanted: bool = True) -> Diagnosis:
    """The diagnosis back from a diagnostician ``Verdict`` (unparsed when absent or unwanted)."""
    if not wanted:
        return Diagnosis(target, {}, "", "unparsed", "not requested (task option targets)")
    if v is None:
        return Diagnosis(target, {}, "", "unparsed", "not judged")
    values = {k: x for k, x in (v.value or {}).items() if k != "type"}
    mbti = (v.value or {}).get("type") if isinstance(v.value, dict) else None
    return Diagnosis(target, values, v.explanation or "", v.status, v.reason, mbti)


def score_list(interp: Interpretation) -> list[Score]:
    """The indicators as ``Score``s."""
    return [
        Score(i.name, i.value, i.reason, "mean", i.n)
        if i.value is not None
        else Score(i.name, None, i.reason or "not computed", "mean", i.n)
        for i in interp.indicators
    ]


def session_scores(task: Any, results: TaskResults) -> TaskScores:
    """Indicators, ``dx.*`` diagnoses and the judge parse counts of one session."""
    codes = {rid: coded_from(v) for rid, v in results.verdicts.get(INTERPRETER, {}).items()}
    interp = task.interpret(results.generations, codes)
    wanted = task.targets()
    diagnoses = {
        t: diagnosis_from(
            t, results.verdicts.get(f"diagnostician.{t}", {}).get(f"dx.{t}"), t in wanted
        )
        for t in TARGETS
    }
    scores = score_list(interp)
    for target in TARGETS:
        d = diagnoses[target]
        dims = BIG_FIVE if target == "big_five" else MBTI_AXES if target == "mbti" else (target,)
        for dim in dims:
            v = d.values.get(dim)
            reason = (
                None if v is not None else (d.reason or f"{dim} not in the diagnostician's reply")
            )
            level = None if v is None else float(v)
            scores.append(Score(f"dx.{dim}", level, reason, "level", 1 if v is not None else 0))
    stages = {name: _parse_counts(list(v.values())) for name, v in results.verdicts.items()}
    detail = {
        "test": task.test,
        "stimulus_seed": task.stimulus_seed(),
        "stimuli": [g.item.id for g in results.generations],
        "show_persona": task.show_persona(),
        "mbti_type": diagnoses["mbti"].mbti_type,
        "diagnoses": {
            t: {
                "values": d.values,
                "status": d.status,
                "reason": d.reason,
                "explanation": d.explanation[:2000],
            }
            for t, d in diagnoses.items()
        },
        "interpretation_block": interp.block,
        "judge_parse": stages,
        "codes_parsed": {"n": interp.n_codes, "parsed": interp.n_codes_parsed},
        **interp.detail,
    }
    if task.test == "rorschach":
        from .inkblot import make_card

        seed = task.stimulus_seed()
        detail["inkblot_sha256"] = {
            g.item.id: make_card(int((g.item.meta or {})["card"]), seed).sha256
            for g in results.generations
        }
    return TaskScores.of(scores, **detail)


def _parse_counts(verdicts: Sequence[Verdict]) -> dict[str, Any]:
    n = len(verdicts)
    ok = sum(v.status == "ok" for v in verdicts)
    return {"n": n, "ok": ok, "unparsed": n - ok, "parse_rate": ok / n if n else None}
