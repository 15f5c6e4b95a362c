"""Battery administration (PsychoBench §5.1): all items in one prompt, answered "index: score".

The ``battery`` administration mode, chosen by the ``battery`` condition of the ``administration``
facet (which names the mode, ``Cell.administration``): the ``questionnaire`` kind hands a battery
cell's items to :class:`Battery` instead of asking them one by one.

Items are grouped by response scale (each group has its own level definitions) and cut into
chunks of at most ``CHUNK`` items (PsychoBench's current chunk size). The reply is parsed line by
line with PsychoBench's recommended robust rule (Huang et al., 2024): ``index: score`` mapped by the
*reported* index, values checked against the scale; a missing or invalid line leaves that item
unanswered. Each chunk is an independent conversation (no carried history).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from psymetrics_core.administer.kinds.questionnaire import questionnaire_sample
from psymetrics_core.backends.base import call_backend
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Instrument, Item, Option, Prompt
from psymetrics_core.contracts.administration import Administration
from psymetrics_core.contracts.kinds import CellRun
from psymetrics_core.pluginsys.defaults.parse import looks_like_refusal

__all__ = [
    "Battery",
    "CHUNK",
    "battery_prompts",
    "parse_battery",
    "administer_battery",
    "SYSTEM",
    "USER",
]

CHUNK = 30
SYSTEM = (
    "You are a helpful assistant who can only reply numbers from {min} to {max}. "
    'Format: "statement index: score".'
)
USER = (
    "You can only reply numbers from {min} to {max} in the following statements. "
    "{instruction} The rating and judgment criteria are as follows: {levels}. "
    "Here are the statements, score them one by one:\n{statements}"
)
_LINE = re.compile(
    r"^\s*(?:[*#>-]\s*)*(?:statement|question)?\s*(\d+)\s*[:.)\-–]\s*\**\s*(\d+)\b", re.I
)


def battery_prompts(
    inst: Instrument,
    items: Sequence[Item],
    options_for: dict[str, tuple[Option, ...]],
    system: str | None = None,
) -> list[tuple[Prompt, list[Item]]]:
    """The battery prompts for ``items`` and the items each one carries, in presented order.

    ``options_for`` gives each item's presented option order (level definitions follow the
    order of the first item of a chunk, so ``reversed-options`` reverses the definitions).
    """
    groups: dict[str, list[Item]] = {}
    for it in items:
        groups.setdefault(it.response_scale, []).append(it)
    out: list[tuple[Prompt, list[Item]]] = []
    for scale_name, group in groups.items():
        rs = inst.response_scales[scale_name]
        for start in range(0, len(group), CHUNK):
            chunk = group[start : start + CHUNK]
            options = options_for.get(chunk[0].id, rs.options)
            levels = ", ".join(f"{o.value} denotes {o.label}" for o in options)
            statements = "\n".join(f"{i}. {it.text}" for i, it in enumerate(chunk, start=1))
            text = USER.format(
                min=rs.min,
                max=rs.max,
                instruction=(rs.instruction or inst.instruction).strip(),
                levels=levels,
                statements=statements,
            )
            sys_text = SYSTEM.format(min=rs.min, max=rs.max)
            if "psychobench" in inst.extra and inst.system_prompt:
                # a PsychoBench scale carries its own full prompt (Huang et al., 2024): send it as
                # the repo does, instruction + "\n" + numbered statements (§5.2)
                text = inst.instruction.strip() + "\n" + statements
                sys_text = inst.system_prompt
            if system and system.strip() != sys_text.strip():  # never the same text twice
                sys_text = system + "\n\n" + sys_text
            messages = (
                {"role": "system", "content": sys_text},
                {"role": "user", "content": text},
            )
            out.append((Prompt(messages=messages, options=options, text=text), list(chunk)))
    return out


def parse_battery(text: str, chunk: Sequence[Item], options: Sequence[Option]) -> list[Answer]:
    """One ``Answer`` per item of ``chunk`` from a reply of ``index: score`` lines."""
    valid = {o.value for o in options}
    found: dict[int, int] = {}
    invalid: set[int] = set()
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        idx, value = int(m.group(1)), int(m.group(2))
        if idx < 1 or idx > len(chunk) or idx in found or idx in invalid:
            continue
        if value in valid:
            found[idx] = value
        else:
            invalid.add(idx)

    refused = not found and looks_like_refusal(text)
    answers = []
    for i in range(1, len(chunk) + 1):
        if i in found:
            answers.append(Answer(found[i], "ok", data={"battery_index": i}))
        else:
            status = "refused" if refused else "unparsed"
            answers.append(Answer(None, status, data={"battery_index": i}))
    return answers


def administer_battery(
    run: CellRun, items: Sequence[Item]
) -> list[tuple[Item, Answer, Prompt, str, dict[str, Any]]]:
    """Give ``items`` of ``run`` as battery prompts; per item: (item, answer, prompt,
    completion, extra).

    Generation only (there is no per-item option likelihood in a battery). Each chunk gets
    ``max(max_new_tokens, 8 * chunk size)`` new tokens so every "index: score" line fits.
    """
    settings, cell = run.settings, run.cell
    if settings.mode != "generate":
        raise PsymError("the 'battery' condition needs --mode generate")
    inst_c = cell.apply_instrument(run.task)
    options_for = {
        it.id: cell.apply_options(inst_c, it, inst_c.response_scale_for(it).options, cell.seed)
        for it in items
    }
    shown = [replace(it, text=cell.apply_text(inst_c, it, it.text)) for it in items]
    originals = {it.id: it for it in items}
    out: list[tuple[Item, Answer, Prompt, str, dict[str, Any]]] = []
    given = battery_prompts(inst_c, shown, options_for, inst_c.system_prompt)
    for p_index, (prompt, chunk) in enumerate(given):
        msgs = cell.apply_messages(list(prompt.messages))
        prompt = Prompt(messages=tuple(msgs), options=prompt.options, text=prompt.text)
        tokens = max(settings.max_new_tokens, 8 * len(chunk))
        comp = call_backend(run.backend, [prompt], replace(settings, max_new_tokens=tokens))[0]
        text = comp.text or ""
        answers = parse_battery(text, chunk, prompt.options)
        for it, ans in zip(chunk, answers, strict=True):
            extra = {"battery_prompt": p_index, "max_new_tokens": tokens}
            out.append((originals[it.id], ans, prompt, text, extra))
        if run.reporter is not None:
            run.reporter.advance(len(chunk))
    return out


class Battery(Administration):
    """All items in one prompt per chunk, answered "index: score"; one sample line per item."""

    name = "battery"

    def administer(self, run: CellRun, items: list[Item]) -> list[tuple[Item, Answer]]:
        """Give the items as battery prompts and write one sample per item."""
        answers: list[tuple[Item, Answer]] = []
        for it, ans, pr, text, extra in administer_battery(run, items):
            answers.append((it, ans))
            tag = {**run.tag, **extra}
            run.writer.write(questionnaire_sample(run.task, run.form, it, pr, text, None, ans, tag))
        return answers
