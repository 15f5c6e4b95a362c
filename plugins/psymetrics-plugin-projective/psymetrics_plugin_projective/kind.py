"""The ``projective`` task kind: a judged kind whose judge stages work on the whole session.

Per cell (one persona x condition x repeat): the examinee answers the session's stimuli
(single-turn requests for TAT and SCT; for the Rorschach one conversation over cards I-X,
each card a free-association turn with the card's image followed by a text-only inquiry
turn, Wang et al. 2026 Eq. 8); then the interpreter stage runs as one batch (TAT: one SCORS-G
call per story; SCT and Rorschach: one call for the session); then the four diagnostician
stages (Big Five, MBTI, depression, suicide), each reading the interpretation block. Every
judge call goes through ``Judge.run_stage`` (response cache, ``judge.jsonl``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from psymetrics_core.administer.judge import JudgeStage, user_prompt
from psymetrics_core.administer.kinds import JudgedKind
from psymetrics_core.administer.kinds.base import CellRun
from psymetrics_core.administer.kinds.free_text import task_sample
from psymetrics_core.administer.kinds.task import Task, TaskResults, TaskScores
from psymetrics_core.backends.base import call_backend
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Generation, Item, Prompt, Score, Verdict

from .coding import Coded
from .diagnosis import (
    BIG_FIVE,
    MBTI_AXES,
    TARGETS,
    Diagnosis,
    diagnostician_prompt,
    parse_diagnosis,
)
from .prompts import prompt

__all__ = ["ProjectiveKind", "session_scores", "persona_text"]

INTERPRETER = "interpreter"


def persona_text(cell: Any) -> str | None:
    """The persona condition's system text of ``cell`` (None without a persona)."""
    for cond in getattr(cell, "conditions", ()):
        if cond.facet == "persona" and cond.messages is not None:
            msgs = cond.messages([])
            text = "\n".join(m["content"] for m in msgs if m["role"] == "system").strip()
            return text or None
    return None


def _coded_verdict(coded: Coded) -> Verdict:
    return Verdict(
        value={k: v for k, v in coded.values.items()},
        status=coded.status,
        reason=coded.reason if coded.status != "ok" else (
            f"missing: {', '.join(coded.missing)}" if coded.missing else None
        ),
        explanation=json.dumps(coded.explanations, ensure_ascii=False) if coded.explanations
        else coded.analysis or None,
    )  # fmt: skip


def _dx_verdict(d: Diagnosis) -> Verdict:
    value: dict[str, Any] = dict(d.values)
    if d.mbti_type:
        value["type"] = d.mbti_type
    return Verdict(value, d.status, d.reason, d.explanation or None)


class ProjectiveKind(JudgedKind):
    """Runs the projective tasks (see the module docstring)."""

    name = "projective"

    def count(self, task: Any, form: str, limit: int | None, session: Any) -> int:
        """Examinee prompts per cell (two per Rorschach card)."""
        n = super().count(task, form, limit, session)
        return 2 * n if getattr(task, "sequential", False) else n

    def generate(self, run: CellRun) -> list[Generation]:
        """Stop early for image tasks on text-only backends; run the Rorschach dialogue."""
        task = run.task
        if getattr(task, "needs_images", False) or _has_images(task, run):
            if not getattr(run.backend, "supports_images", False):
                raise PsymError(
                    f"task '{task.id}' shows images, but backend '{_backend_name(run.backend)}' "
                    "is text-only (supports_images is False); use an image-capable backend "
                    "(openai-chat with a vision model, or hf with an image-text-to-text model)"
                )
        if not getattr(task, "sequential", False):
            return super().generate(run)
        return self._dialogue(run)

    def _dialogue(self, run: CellRun) -> list[Generation]:
        task: Any = run.task
        items = run.cell.apply_items(task, self.items(task, run.form, run.limit), run.cell.seed)
        if not items:
            return []
        first = task.render(items[0], run.cell)
        history = [dict(m) for m in first.messages[:-1]]  # system, framing, long context
        inquiry = prompt("rorschach_inquiry")
        out: list[Generation] = []
        for item in items:
            ask = {"role": "user", "content": item.text}
            p1 = Prompt(tuple([*history, ask]), (), item.text, images=(task.card_image(item),))
            c1 = call_backend(run.backend, [p1], run.settings, run.reporter)[0]
            perception = (c1.text or "").strip()
            history += [ask, {"role": "assistant", "content": perception}]
            ask2 = {"role": "user", "content": inquiry}
            p2 = Prompt(tuple([*history, ask2]), (), inquiry)
            c2 = call_backend(run.backend, [p2], run.settings, run.reporter)[0]
            detail = (c2.text or "").strip()
            history += [ask2, {"role": "assistant", "content": detail}]
            data = {"phase": "free_association", "perception": perception, "inquiry": detail}
            gen = Generation(item, perception, "ok" if perception else "unparsed", data)
            run.writer.write(task_sample(task, run, p1, c1.text, gen))
            run.writer.write(
                task_sample(task, run, p2, c2.text, Generation(item, detail, gen.status,
                                                               {"phase": "inquiry"}))
            )  # fmt: skip
            out.append(gen)
        return out

    def after_generation(
        self, run: CellRun, task: Task, generations: list[Generation]
    ) -> dict[str, dict[str, Verdict]]:
        """Interpreter stage (one batch), then the four diagnostician stages."""
        t: Any = task
        reqs = t.interpreter_requests(generations)
        codes: dict[str, Coded] = {}

        def parse_code(text: str) -> Verdict:
            return _coded_verdict(t.parse_code(text, generations))

        stage = JudgeStage(INTERPRETER, _unused, parse_code, max_new_tokens=t.tokens("interpreter"))
        requests = [(Item(rid, "", ()), user_prompt(user, system)) for rid, system, user in reqs]
        verdicts = {INTERPRETER: run.judge.run_stage(t.id, stage, requests, run.tag)}
        for rid, v in verdicts[INTERPRETER].items():
            codes[rid] = _coded_from(v)
        interp = t.interpret(generations, codes)
        persona = persona_text(run.cell) if t.show_persona() else None
        for target in t.targets():
            system, user = diagnostician_prompt(target, interp.block, persona)

            def parse_dx(text: str, _t: str = target) -> Verdict:
                return _dx_verdict(parse_diagnosis(_t, text))

            dstage = JudgeStage(f"diagnostician.{target}", _unused, parse_dx,
                                max_new_tokens=t.tokens("diagnostician"))  # fmt: skip
            got = run.judge.run_stage(
                t.id, dstage, [(Item(f"dx.{target}", "", ()), user_prompt(user, system))], run.tag
            )
            verdicts[dstage.name] = got
        return verdicts


def _unused(item: Item, generation: Generation, previous: Any) -> None:
    return None


def _coded_from(v: Verdict) -> Coded:
    values = dict(v.value) if isinstance(v.value, dict) else {}
    missing = tuple(k for k, x in values.items() if x is None)
    explanations: dict[str, str] = {}
    if v.explanation and v.explanation.startswith("{"):
        try:
            explanations = dict(json.loads(v.explanation))
        except ValueError:
            explanations = {}
    return Coded(values, explanations, v.status, v.reason if v.status != "ok" else None, missing)


def _diagnosis_from(target: str, v: Verdict | None, wanted: bool = True) -> Diagnosis:
    if not wanted:
        return Diagnosis(target, {}, "", "unparsed", "not requested (task option targets)")
    if v is None:
        return Diagnosis(target, {}, "", "unparsed", "not judged")
    values = {k: x for k, x in (v.value or {}).items() if k != "type"}
    mbti = (v.value or {}).get("type") if isinstance(v.value, dict) else None
    return Diagnosis(target, values, v.explanation or "", v.status, v.reason, mbti)


def _has_images(task: Any, run: CellRun) -> bool:
    items = task.load_items()[:1]
    return bool(items and (items[0].meta or {}).get("image"))


def _backend_name(be: Any) -> str:
    ident = be.identity() if hasattr(be, "identity") else {}
    return str(ident.get("backend") or getattr(be, "name", "?"))


def session_scores(task: Any, results: TaskResults) -> TaskScores:
    """Indicators, ``dx.*`` diagnoses and the judge parse counts of one session."""
    from .tasks import score_list

    codes = {rid: _coded_from(v) for rid, v in results.verdicts.get(INTERPRETER, {}).items()}
    interp = task.interpret(results.generations, codes)
    wanted = task.targets()
    diagnoses = {
        t: _diagnosis_from(
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
            scores.append(Score(f"dx.{dim}", None if v is None else float(v), reason, "level",
                                1 if v is not None else 0))  # fmt: skip
    stages = {name: _parse_counts(list(v.values())) for name, v in results.verdicts.items()}
    detail = {
        "test": task.test,
        "stimulus_seed": task.stimulus_seed(),
        "stimuli": [g.item.id for g in results.generations],
        "show_persona": task.show_persona(),
        "mbti_type": diagnoses["mbti"].mbti_type,
        "diagnoses": {t: {"values": d.values, "status": d.status, "reason": d.reason,
                          "explanation": d.explanation[:2000]}
                      for t, d in diagnoses.items()},
        "interpretation_block": interp.block,
        "judge_parse": stages,
        "codes_parsed": {"n": interp.n_codes,
                         "parsed": interp.n_codes_parsed},
        **interp.detail,
    }  # fmt: skip
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
