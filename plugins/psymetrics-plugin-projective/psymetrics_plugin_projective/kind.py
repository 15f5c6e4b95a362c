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

from typing import Any

from psymetrics_core.api import (
    CellRun,
    Generation,
    Item,
    JudgedKind,
    JudgeStage,
    Prompt,
    PsymError,
    Task,
    Verdict,
    call_backend,
    task_sample,
    user_prompt,
)

from .coding import Coded
from .diagnosis import diagnostician_prompt, parse_diagnosis
from .prompts import prompt
from .scoring import INTERPRETER, coded_from, coded_verdict, dx_verdict, session_scores

__all__ = ["ProjectiveKind", "session_scores", "persona_text"]


def persona_text(cell: Any) -> str | None:
    """The persona condition's system text of ``cell`` (None without a persona)."""
    for cond in getattr(cell, "conditions", ()):
        if cond.facet == "persona" and cond.messages is not None:
            msgs = cond.messages([])
            text = "\n".join(m["content"] for m in msgs if m["role"] == "system").strip()
            return text or None
    return None


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
                task_sample(
                    task,
                    run,
                    p2,
                    c2.text,
                    Generation(item, detail, gen.status, {"phase": "inquiry"}),
                )
            )
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
            return coded_verdict(t.parse_code(text, generations))

        stage = JudgeStage(INTERPRETER, _unused, parse_code, max_new_tokens=t.tokens("interpreter"))
        requests = [(Item(rid, "", ()), user_prompt(user, system)) for rid, system, user in reqs]
        verdicts = {INTERPRETER: run.judge.run_stage(t.id, stage, requests, run.tag)}
        for rid, v in verdicts[INTERPRETER].items():
            codes[rid] = coded_from(v)
        interp = t.interpret(generations, codes)
        persona = persona_text(run.cell) if t.show_persona() else None
        for target in t.targets():
            system, user = diagnostician_prompt(target, interp.block, persona)

            def parse_dx(text: str, _t: str = target) -> Verdict:
                return dx_verdict(parse_diagnosis(_t, text))

            dstage = JudgeStage(
                f"diagnostician.{target}",
                _unused,
                parse_dx,
                max_new_tokens=t.tokens("diagnostician"),
            )
            got = run.judge.run_stage(
                t.id, dstage, [(Item(f"dx.{target}", "", ()), user_prompt(user, system))], run.tag
            )
            verdicts[dstage.name] = got
        return verdicts


def _unused(item: Item, generation: Generation, previous: Any) -> None:
    return None


def _has_images(task: Any, run: CellRun) -> bool:
    items = task.load_items()[:1]
    return bool(items and (items[0].meta or {}).get("image"))


def _backend_name(be: Any) -> str:
    ident = be.identity() if hasattr(be, "identity") else {}
    return str(ident.get("backend") or getattr(be, "name", "?"))
