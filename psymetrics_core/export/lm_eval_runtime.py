"""Functions that exported lm-evaluation-harness tasks call at run time.

The task folders written by ``psym export lm-eval`` hold YAML and a one-line ``utils.py`` that
re-exports these functions, so lm-eval always uses psymetrics' own code: items come from the
installed plugin, prompts from the ``render_prompt`` hook, answers from ``parse_response`` and
keying from the ``score`` hook. Nothing here imports lm_eval; ``load_docs`` imports ``datasets``
(a dependency of lm-eval) only when called.

lm-eval calls these functions with its own arguments only, so inside lm-eval this module is an
entry point like ``psym``: it builds one ``Session`` of the installed plugins on first use and
keeps it for the process (``_own_session``). The functions that read plugins also take
``session=`` (the exporter and tests pass theirs); ``load_docs`` gets lm-eval's metadata only.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from psymetrics_core.administer.api import session_or_default
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Completion, Instrument, Item, Prompt

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

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


@functools.cache
def _own_session() -> Session:
    """The session of an lm-eval process (an entry point: lm-eval calls these functions with no
    session): the installed plugins, loaded once."""

    return session_or_default()


def _use(session: Session | None) -> Session:
    return session if session is not None else _own_session()


def _items(session: Session, task: str, form: str) -> dict[str, Item]:
    items = session.hook.load_items(instrument=session.get_instrument(task), form=form)
    return {it.id: it for it in items}


def _prompt(session: Session, task: str, form: str, item_id: str) -> Prompt:
    inst = session.get_instrument(task)
    item = _items(session, task, form)[item_id]
    prompt: Prompt = session.hook.render_prompt(instrument=inst, item=item)
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


def item_docs(
    task: str, form: str = "original", session: Session | None = None
) -> list[dict[str, Any]]:
    """One lm-eval doc per item of ``task``, rendered by psymetrics' ``render_prompt`` hook.

    Keys: ``task``, ``form``, ``item_id``, ``system`` (system prompt or ""), ``prompt`` (the
    user message), ``choices`` (option values as strings, the continuations scored) and
    ``labels`` (option labels, for reading logged samples).
    """
    session = _use(session)
    docs = []
    for item_id in _items(session, task, form):
        prompt = _prompt(session, task, form, item_id)
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
    import datasets  # on demand: the [lm-eval] extra

    return {"test": datasets.Dataset.from_list(item_docs(psym_task, psym_form))}


def _answer(
    session: Session, doc: dict[str, Any], completion: Completion
) -> tuple[Instrument, Item, Answer]:
    task, form, item_id = doc["task"], doc.get("form") or "original", str(doc["item_id"])
    inst = session.get_instrument(task)
    item = _items(session, task, form)[item_id]
    prompt = _prompt(session, task, form, item_id)
    answer: Answer = session.hook.parse_response(
        instrument=inst, item=item, prompt=prompt, completion=completion, parsers=session.parsers()
    )
    return inst, item, answer


def decomposable(inst: Instrument, scale: str) -> bool:
    """Whether ``scale``'s score is the mean (or sum) of per-item keyed values.

    A centred scale (e.g. minus the respondent's mean over all items, Schwartz's MRAT) is not:
    it is scored by :func:`agg_respondent` over the whole response set instead.
    """
    return getattr(inst.scales[scale], "centre", None) is None


def _scale_values(
    session: Session, inst: Instrument, item: Item, answer: Answer, form: str
) -> dict[str, Any]:
    """Per scale, the item's keyed contribution (from the instrument's ``score`` hook run on
    this one answer), or for a non-decomposable scale the raw answer for
    :func:`agg_respondent`."""
    out: dict[str, Any] = {}
    for name in inst.scales:
        if not decomposable(inst, name):
            out[name] = (inst.id, form, name, item.id, answer.value)
    if answer.value is None:
        return out
    scores = session.hook.score(
        instrument=inst, responses={item.id: answer.value}, form=form, answers={item.id: answer}
    )
    for name, s in scores.items():
        if decomposable(inst, name) and s.n_answered and s.score is not None:
            out[name] = float(s.score)
    return out


def agg_respondent(
    rows: Sequence[tuple[str, str, str, str, int | None]], session: Session | None = None
) -> float:
    """Aggregation of non-decomposable scales: psymetrics' ``score`` hook on all answers.

    Each row is ``(task, form, scale, item_id, value)`` from one item; NaN if no item of the
    scale was answered.
    """
    if not rows:
        return math.nan
    session = _use(session)
    task, form, scale = rows[0][0], rows[0][1], rows[0][2]
    inst = session.get_instrument(task)
    responses = {str(r[3]): r[4] for r in rows}
    answers = {k: Answer(v, "ok" if v is not None else "unparsed") for k, v in responses.items()}
    scores = session.hook.score(instrument=inst, responses=responses, form=form, answers=answers)
    value = scores[scale].score
    return math.nan if value is None else float(value)


def chosen_value(
    lls: Sequence[float], doc: dict[str, Any], session: Session | None = None
) -> int | None:
    """The option value psymetrics picks from per-choice log-likelihoods (for tests)."""
    _, _, answer = _answer(_use(session), doc, Completion(option_logprobs=tuple(lls)))
    return answer.value


def process_logprob(
    doc: dict[str, Any], results: Sequence[Any], session: Session | None = None
) -> dict[str, Any]:
    """``process_results`` of ``psym_<task>``: argmax over the options, keyed, per scale.

    ``results`` holds one ``(loglikelihood, is_greedy)`` per choice, in ``doc["choices"]``
    order, which is the order of the prompt's options.
    """
    session = _use(session)
    lls = tuple(float(r[0]) for r in results[: len(doc["choices"])])
    inst, item, answer = _answer(session, doc, Completion(option_logprobs=lls))
    return _scale_values(session, inst, item, answer, doc.get("form") or "original")


def parse_filter(
    resps: Sequence[Sequence[str]], docs: Sequence[dict[str, Any]], session: Session | None = None
) -> list[list[str]]:
    """lm-eval ``custom`` filter: psymetrics' parser turns each generation into an option value.

    The filtered response is the value as a string, or ``[unparsed]`` / ``[refused]``.
    """
    session = _use(session)
    out: list[list[str]] = []
    for doc_resps, doc in zip(resps, docs, strict=True):
        row = []
        for text in doc_resps:
            _, _, answer = _answer(session, doc, Completion(text=text))
            if answer.value is not None:
                row.append(str(answer.value))
            else:
                row.append(REFUSED if answer.status == "refused" else UNPARSED)
        out.append(row)
    return out


def process_generate(
    doc: dict[str, Any], results: Sequence[str], session: Session | None = None
) -> dict[str, Any]:
    """``process_results`` of ``psym_<task>_gen``: the parsed value, keyed, per scale.

    Also reports ``parse_rate`` (1 if the generation parsed, else 0) for every item.
    """
    session = _use(session)
    task, form = doc["task"], doc.get("form") or "original"
    text = results[0] if results else ""
    inst = session.get_instrument(task)
    item = _items(session, task, form)[str(doc["item_id"])]
    if text in doc["choices"]:  # already parsed by ``parse_filter``
        answer = Answer(int(text), "ok")
    elif text in (UNPARSED, REFUSED):
        answer = Answer(None, "refused" if text == REFUSED else "unparsed")
    else:  # raw generation (the filter was left out): parse it here
        _, _, answer = _answer(session, doc, Completion(text=text))
    out = _scale_values(session, inst, item, answer, form)
    out["parse_rate"] = 1.0 if answer.value is not None else 0.0
    return out


def agg_sum(values: Sequence[float]) -> float:
    """Aggregation of ``sum`` scales: the sum of the answered items' keyed values."""
    return math.fsum(values)
