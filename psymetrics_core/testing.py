"""Public testing helpers for plugin authors: conformance checks of an installed instrument.

Use in a plugin's tests::

    from psymetrics_core.testing import check_instrument, score_vector

    def test_conforms():
        check_instrument("mytask", reverse={"2", "5"}, scale_sizes={"trait": 6})

    def test_published_key():
        assert score_vector("mytask", {"1": 5, "2": 1})["trait"] == 5.0

Each helper reads the installed plugins through a fresh ``Session``, or through the
``session=`` you pass (e.g. one holding a plugin registered by the test itself).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from psymetrics_core.administer.api import session_or_default
from psymetrics_core.base.types import Answer, Completion, Instrument
from psymetrics_core.instruments.spec import load_instrument

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["check_instrument", "score_vector", "with_placeholder_texts"]


def with_placeholder_texts(inst: Instrument) -> Instrument:
    """``inst`` with "Item <id>" texts where the plugin ships none (``item_texts: user``)."""
    forms = {
        form: [it if it.text else replace(it, text=f"Item {it.id}") for it in items]
        for form, items in inst.forms.items()
    }
    return replace(inst, forms=forms)


def score_vector(
    task: str,
    responses: Mapping[str | int, int | None],
    form: str = "original",
    *,
    session: Session | None = None,
) -> dict[str, float | None]:
    """Score one respondent's raw answers ({item id: value}) with ``task``'s key."""
    session = _session(session)
    inst = session.get_instrument(task)
    given = {str(k): v for k, v in responses.items()}
    answers = {k: Answer(v, "ok" if v is not None else "unparsed") for k, v in given.items()}
    scores = session.hook.score(instrument=inst, responses=given, form=form, answers=answers)
    return {name: s.score for name, s in scores.items()}


def check_instrument(
    task: str,
    *,
    reverse: Iterable[str | int] | None = None,
    scale_sizes: Mapping[str, int] | None = None,
    n_items: int | None = None,
    session: Session | None = None,
) -> dict[str, Any]:
    """Check that the installed instrument ``task`` is well-formed; raise AssertionError if not.

    Checks: the spec re-validates from its file; every form loads through ``load_items``;
    every item renders; every option label (and number) parses back to its value; the
    respondent who picks each item's keyed maximum scores every scale's maximum and the keyed
    minimum its minimum. Optionally compares the reverse-keyed ids, the items per scale and the
    item count with the published key (this is what catches a wrong reverse key in the CSV).
    Returns a summary of what was checked.
    """

    session = _session(session)
    hook = session.hook
    inst = session.get_instrument(task)
    problems: list[str] = []
    if inst.spec_path is not None:
        load_instrument(inst.spec_path)  # raises SpecError with file/row/field
    inst = with_placeholder_texts(inst)
    n_prompts = 0
    for form in inst.forms:
        items = hook.load_items(instrument=inst, form=form)
        if not items:
            problems.append(f"form '{form}' loads no items")
            continue
        for it in items:
            prompt = hook.render_prompt(instrument=inst, item=it)
            n_prompts += 1
            if not prompt.text.strip():
                problems.append(f"form '{form}', item {it.id}: empty prompt")
            if it.text not in prompt.text and not inst.prompt_template.count("item["):
                problems.append(f"form '{form}', item {it.id}: prompt does not show the item")
            for o in prompt.options:
                for reply in (o.label, str(o.value)):
                    ans = hook.parse_response(
                        instrument=inst,
                        item=it,
                        prompt=prompt,
                        completion=Completion(text=reply),
                        parsers=session.parsers(),
                    )
                    if ans.value != o.value:
                        problems.append(
                            f"item {it.id}: reply {reply!r} parses to {ans.value!r}, not {o.value}"
                        )
        problems += _check_extremes(inst, form, hook)
    if reverse is not None:
        got = {it.id for it in inst.items if it.reverse}
        want = {str(r) for r in reverse}
        if got != want:
            problems.append(
                f"reverse-keyed items differ from the published key: extra "
                f"{sorted(got - want)}, missing {sorted(want - got)}"
            )
    for scale, size in (scale_sizes or {}).items():
        if scale not in inst.scales:
            problems.append(f"no scale '{scale}'")
        elif len(inst.scale_items(scale)) != size:
            problems.append(f"scale '{scale}' has {len(inst.scale_items(scale))} items, not {size}")
    if n_items is not None and len(inst.items) != n_items:
        problems.append(f"{len(inst.items)} items, not {n_items}")
    if problems:
        raise AssertionError(f"task '{task}': " + "; ".join(dict.fromkeys(problems)))
    return {"task": task, "forms": list(inst.forms), "prompts": n_prompts}


def _session(session: Session | None) -> Session:
    """``session``, or a fresh session of the installed plugins."""

    return session_or_default(session)


def _check_extremes(inst: Instrument, form: str, hook: Any) -> list[str]:
    """The keyed-max respondent must score each scale's max, the keyed-min its min."""
    out: list[str] = []
    items = inst.forms[form]
    for label, high in (("keyed-max", True), ("keyed-min", False)):
        raw: dict[str, int | None] = {}
        for it in items:
            rs = inst.response_scale_for(it)
            raw[it.id] = rs.max if high != it.reverse else rs.min
        answers = {k: Answer(v, "ok") for k, v in raw.items()}
        scores = hook.score(instrument=inst, responses=raw, form=form, answers=answers)
        for name, sdef in inst.scales.items():
            members = inst.scale_items(name, form)
            ends = [
                inst.response_scale_for(it).max if high else inst.response_scale_for(it).min
                for it in members
            ]
            want = float(sum(ends)) if sdef.method == "sum" else sum(ends) / len(ends)
            got = scores[name].score if name in scores else None
            if got is None or abs(got - want) > 1e-9:
                out.append(f"form '{form}': the {label} respondent scores {name}={got}, not {want}")
    return out
