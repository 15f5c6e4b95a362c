"""Functions that exported lm-evaluation-harness tasks call at run time.

The task folders written by ``psym export lm-eval`` hold YAML and a one-line ``utils.py`` that
re-exports these functions, so lm-eval always uses psymetrics' own code: items come from the
installed plugin, prompts from the ``render_prompt`` hook, answers from ``parse_response`` and
keying from the ``score`` hook. Nothing here imports lm_eval; ``load_docs`` imports ``datasets``
(a dependency of lm-eval) only when called.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Completion, Instrument, Item, Prompt

__all__ = [
    "load_docs",
    "item_docs",
    "process_logprob",
    "process_generate",
    "parse_filter",
    "agg_sum",
    "agg_respondent",
    "decomposable",
    "chosen_value",
    "UNPARSED",
]

UNPARSED = "[unparsed]"  # what the parse filter leaves when no option value was found
REFUSED = "[refused]"


def _hook() -> Any:
    from psymetrics_core.pluginsys.plugins import get_plugin_manager

    return get_plugin_manager().hook


def _instrument(task: str) -> Instrument:
    from psymetrics_core.pluginsys.registry import (
        get_instrument,  # cached by the registry per plugin manager
    )

    return get_instrument(task)


def _items(task: str, form: str) -> dict[str, Item]:
    items = _hook().load_items(instrument=_instrument(task), form=form)
    return {it.id: it for it in items}


def _prompt(task: str, form: str, item_id: str) -> Prompt:
    inst = _instrument(task)
    prompt: Prompt = _hook().render_prompt(instrument=inst, item=_items(task, form)[item_id])
    return prompt


def prompt_parts(prompt: Prompt) -> tuple[str, str]:
    """The system text ("" if none) and user text of a one-turn prompt.

    Raises ``PsymError`` for prompts lm-eval's zero-shot chat turn cannot represent
    (several user turns, assistant turns, or an empty user message).
    """
    roles = [m.get("role") for m in prompt.messages]
    if roles not in (["user"], ["system", "user"]):
        raise PsymError(
            f"prompt has messages {roles}; lm-eval tasks need [system,] user (one turn)"
        )
    system = prompt.messages[0]["content"] if roles[0] == "system" else ""
    return system, prompt.messages[-1]["content"]


def item_docs(task: str, form: str = "original") -> list[dict[str, Any]]:
    """One lm-eval doc per item of ``task``, rendered by psymetrics' ``render_prompt`` hook.

    Keys: ``task``, ``form``, ``item_id``, ``system`` (system prompt or ""), ``prompt`` (the
    user message), ``choices`` (option values as strings, the continuations scored) and
    ``labels`` (option labels, for reading logged samples).
    """
    docs = []
    for item_id in _items(task, form):
        prompt = _prompt(task, form, item_id)
        system, user = prompt_parts(prompt)
        docs.append(
            {
                "task": task,
                "form": form,
                "item_id": item_id,
                "system": system,
                "prompt": user,
                "choices": [str(o.value) for o in prompt.options],
                "labels": [o.label for o in prompt.options],
            }
        )
    return docs


def load_docs(psym_task: str, psym_form: str = "original", **_metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of an exported task: ``{"test": datasets.Dataset}`` of item docs.

    lm-eval passes the task's metadata (model args, versions) as keyword arguments too;
    they are ignored.
    """
    import datasets

    return {"test": datasets.Dataset.from_list(item_docs(psym_task, psym_form))}


def _answer(doc: dict[str, Any], completion: Completion) -> tuple[Instrument, Item, Answer]:
    task, form, item_id = doc["task"], doc.get("form") or "original", str(doc["item_id"])
    inst = _instrument(task)
    item = _items(task, form)[item_id]
    prompt = _prompt(task, form, item_id)
    answer: Answer = _hook().parse_response(
        instrument=inst, item=item, prompt=prompt, completion=completion
    )
    return inst, item, answer


def decomposable(inst: Instrument, scale: str) -> bool:
    """Whether ``scale``'s score is the mean (or sum) of per-item keyed values.

    A centred scale (e.g. minus the respondent's mean over all items, Schwartz's MRAT) is not:
    it is scored by :func:`agg_respondent` over the whole response set instead.
    """
    return getattr(inst.scales[scale], "centre", None) is None


def _scale_values(inst: Instrument, item: Item, answer: Answer, form: str) -> dict[str, Any]:
    """Per scale, the item's keyed contribution (from the instrument's ``score`` hook run on
    this one answer), or for a non-decomposable scale the raw answer for
    :func:`agg_respondent`."""
    out: dict[str, Any] = {}
    for name in inst.scales:
        if not decomposable(inst, name):
            out[name] = (inst.id, form, name, item.id, answer.value)
    if answer.value is None:
        return out
    scores = _hook().score(
        instrument=inst, responses={item.id: answer.value}, form=form, answers={item.id: answer}
    )
    for name, s in scores.items():
        if decomposable(inst, name) and s.n_answered and s.score is not None:
            out[name] = float(s.score)
    return out


def agg_respondent(rows: Sequence[tuple[str, str, str, str, int | None]]) -> float:
    """Aggregation of non-decomposable scales: psymetrics' ``score`` hook on all answers.

    Each row is ``(task, form, scale, item_id, value)`` from one item; NaN if no item of the
    scale was answered.
    """
    if not rows:
        return math.nan
    task, form, scale = rows[0][0], rows[0][1], rows[0][2]
    inst = _instrument(task)
    responses = {str(r[3]): r[4] for r in rows}
    answers = {k: Answer(v, "ok" if v is not None else "unparsed") for k, v in responses.items()}
    scores = _hook().score(instrument=inst, responses=responses, form=form, answers=answers)
    value = scores[scale].score
    return math.nan if value is None else float(value)


def chosen_value(lls: Sequence[float], doc: dict[str, Any]) -> int | None:
    """The option value psymetrics picks from per-choice log-likelihoods (for tests)."""
    _, _, answer = _answer(doc, Completion(option_logprobs=tuple(lls)))
    return answer.value


def process_logprob(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """``process_results`` of ``psym_<task>``: argmax over the options, keyed, per scale.

    ``results`` holds one ``(loglikelihood, is_greedy)`` per choice, in ``doc["choices"]``
    order, which is the order of the prompt's options.
    """
    lls = tuple(float(r[0]) for r in results[: len(doc["choices"])])
    inst, item, answer = _answer(doc, Completion(option_logprobs=lls))
    return _scale_values(inst, item, answer, doc.get("form") or "original")


def parse_filter(resps: Sequence[Sequence[str]], docs: Sequence[dict[str, Any]]) -> list[list[str]]:
    """lm-eval ``custom`` filter: psymetrics' parser turns each generation into an option value.

    The filtered response is the value as a string, or ``[unparsed]`` / ``[refused]``.
    """
    out: list[list[str]] = []
    for doc_resps, doc in zip(resps, docs, strict=True):
        row = []
        for text in doc_resps:
            _, _, answer = _answer(doc, Completion(text=text))
            if answer.value is not None:
                row.append(str(answer.value))
            else:
                row.append(REFUSED if answer.status == "refused" else UNPARSED)
        out.append(row)
    return out


def process_generate(doc: dict[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """``process_results`` of ``psym_<task>_gen``: the parsed value, keyed, per scale.

    Also reports ``parse_rate`` (1 if the generation parsed, else 0) for every item.
    """
    task, form = doc["task"], doc.get("form") or "original"
    text = results[0] if results else ""
    inst = _instrument(task)
    item = _items(task, form)[str(doc["item_id"])]
    if text in doc["choices"]:  # already parsed by ``parse_filter``
        answer = Answer(int(text), "ok")
    elif text in (UNPARSED, REFUSED):
        answer = Answer(None, "refused" if text == REFUSED else "unparsed")
    else:  # raw generation (the filter was left out): parse it here
        _, _, answer = _answer(doc, Completion(text=text))
    out = _scale_values(inst, item, answer, form)
    out["parse_rate"] = 1.0 if answer.value is not None else 0.0
    return out


def agg_sum(values: Sequence[float]) -> float:
    """Aggregation of ``sum`` scales: the sum of the answered items' keyed values."""
    return math.fsum(values)
