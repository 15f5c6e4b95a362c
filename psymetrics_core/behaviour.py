"""Behaviour (downstream) tasks: free-text tasks that use the same hooks as questionnaires.

A behaviour task is an ``Instrument`` with ``kind == "behaviour"``: its items are prompts, it has
no response scales, and its plugin implements ``parse_response``, ``score`` and ``aggregate``
for its own task id (returning ``None`` for every other task); the core's default
``render_prompt`` sends each item's text alone as the user message. Per-run task
options (``psym eval --task-arg TASK.KEY=VALUE`` or ``--data``) reach the hooks as
``instrument.options``; the task declares the keys it accepts, so a typo is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .errors import PsymError
from .types import Answer, Instrument, Item, ScaleDef, ScaleScore

__all__ = [
    "behaviour_instrument",
    "behaviour_entry",
    "parse_task_args",
    "with_options",
    "DEFAULT_MAX_NEW_TOKENS",
]

DEFAULT_MAX_NEW_TOKENS = 24  # questionnaire answers; behaviour tasks declare their own


def behaviour_instrument(
    *,
    id: str,
    name: str,
    version: str,
    citation: str,
    license_status: str,
    item_source: str,
    scoring_rule: str,
    scales: Mapping[str, str],
    items: Iterable[Item] = (),
    options: Mapping[str, str] | None = None,
    max_new_tokens: int = 256,
    notes: str = "",
) -> Instrument:
    """A behaviour task ready for ``register(instrument)``.

    :param scales: score name -> description (the plugin's ``score`` hook fills them).
    :param items: the prompts when they are fixed (a data-dependent task builds them in its
        ``load_items`` hook instead and may leave this empty).
    :param options: task option name -> help text; ``evaluate()`` rejects any other key.
    :param max_new_tokens: generation length used unless the user passes ``--max-new-tokens``.
    """
    return Instrument(
        id=id,
        name=name,
        version=version,
        citation=citation,
        license_status=license_status,
        redistributable=True,
        item_source=item_source,
        scoring_rule=scoring_rule,
        response_scales={},
        scales={k: ScaleDef(k, "mean", v) for k, v in scales.items()},
        forms={"original": list(items)},
        prompt_template="",
        instruction="",
        notes=notes,
        extra={
            "kind": "behaviour",
            "options": dict(options or {}),
            "max_new_tokens": max_new_tokens,
        },
    )


def parse_task_args(
    pairs: Iterable[str], tasks: Iterable[str], data: Iterable[str] = ()
) -> dict[str, dict[str, str]]:
    """Parse ``TASK.KEY=VALUE`` pairs (and ``--data [TASK=]PATH``) into {task: {key: value}}.

    ``--data PATH`` without a task is stored under ``"*"``: it goes to every task that
    accepts a ``data`` option (see ``with_options``).
    """
    task_list = list(tasks)
    out: dict[str, dict[str, str]] = {}
    for raw in pairs:
        key, sep, value = raw.partition("=")
        task, dot, opt = key.strip().partition(".")
        if not sep or not dot or not task or not opt.strip():
            raise PsymError(f"--task-arg: expected TASK.KEY=VALUE, got {raw!r}")
        out.setdefault(task, {})[opt.strip()] = value.strip()
    for raw in data:
        task, sep, path = raw.partition("=")
        if sep and task in task_list:
            out.setdefault(task, {})["data"] = path
        else:
            out.setdefault("*", {})["data"] = raw
    return out


def with_options(
    inst: Instrument, options: Mapping[str, Any] | None, shared: Mapping[str, Any] | None = None
) -> Instrument:
    """``inst`` carrying this run's task ``options``; unknown keys are a one-line error.

    ``shared`` options (``--data`` without a task) apply only where the task accepts the key.
    """
    known: dict[str, str] = dict(inst.extra.get("options") or {})
    opts = {str(k): str(v) for k, v in (shared or {}).items() if k in known}
    opts.update({str(k): str(v) for k, v in (options or {}).items()})
    unknown = sorted(set(opts) - set(known))
    if unknown:
        accepted = ", ".join(sorted(known)) if known else "none"
        raise PsymError(
            f"task '{inst.id}' does not take option(s) {', '.join(unknown)} (accepted: {accepted})"
        )
    return replace(inst, options=opts)


def behaviour_entry(
    scores: Mapping[str, ScaleScore], answers: Sequence[tuple[Item, Answer]], **detail: Any
) -> dict[str, Any]:
    """A behaviour task's ``results.json`` entry: scores, response counts and ``detail``."""
    n = len(answers)
    n_ok = sum(a.status == "ok" for _, a in answers)
    n_refused = sum(a.status == "refused" for _, a in answers)
    return {
        "scales": {
            k: {
                "score": s.score,
                "n_items": s.n_items,
                "n_answered": s.n_answered,
                "method": s.method,
            }
            for k, s in scores.items()
        },
        **detail,
        "n_items": n,
        "n_answered": n_ok,
        "n_unparsed": n - n_ok - n_refused,
        "n_refused": n_refused,
        "parse_rate": n_ok / n if n else None,
    }
