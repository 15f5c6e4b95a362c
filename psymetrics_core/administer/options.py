"""Per-run task options (``psym eval --task-arg TASK.KEY=VALUE`` or ``--data``).

Downstream (behaviour) tasks are ``administer.kinds`` task objects; their options reach
them as ``task.options``. A task declares the keys it accepts, so a typo is an error.

(Named ``psymetrics_core.behaviour`` before 2026-11; renamed without a compatibility shim: these
helpers serve the CLI and the runner, and were never part of the plugin API -- plugins build
tasks with ``psymetrics_core.administer.kinds``, whose task objects receive their options as
``task.options``.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Instrument

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = [
    "parse_task_args",
    "check_shared_data",
    "with_options",
    "DEFAULT_MAX_NEW_TOKENS",
]

DEFAULT_MAX_NEW_TOKENS = 24  # questionnaire answers; other tasks declare their own


def parse_task_args(
    pairs: Iterable[str], tasks: Iterable[str], data: Iterable[str] = (), *, session: Session
) -> dict[str, dict[str, str]]:
    """Parse ``TASK.KEY=VALUE`` pairs (and ``--data [TASK=]PATH``) into {task: {key: value}}.

    ``--data PATH`` without a task is stored under ``"*"``: it goes to every task that
    accepts a ``data`` option (see ``with_options``); when none of ``tasks`` does, or the
    ``TASK=`` names a task of ``session`` not among ``tasks``, that is a one-line error
    (``check_shared_data``) instead of a file silently dropped.
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
    if "data" in out.get("*", {}):
        check_shared_data(task_list, out["*"]["data"], session)
    return out


def _takes_data(inst: Instrument) -> bool:
    return "data" in (inst.extra.get("options") or {})


def check_shared_data(tasks: Sequence[str], raw: str, session: Session) -> None:
    """``--data RAW`` (no task of ``tasks`` named) must reach a task: refuse it in one line
    naming the option and the installed tasks that take data when none of ``tasks`` does, or
    when ``RAW`` is ``TASK=PATH`` for an installed task that is not among ``tasks``."""
    installed = set(session.task_ids())
    if any(t not in installed for t in tasks):
        return  # an unknown task id: the run reports it in its own words
    prefix, sep, _ = raw.partition("=")
    if sep and prefix in installed:
        raise PsymError(
            f"--data {raw}: task '{prefix}' is not among the selected tasks ({', '.join(tasks)})"
        )
    if any(_takes_data(session.get_instrument(t)) for t in tasks):
        return
    takers = sorted(t for t, inst in session.instruments().items() if _takes_data(inst))
    raise PsymError(
        f"--data {raw}: none of the selected tasks ({', '.join(tasks)}) takes a data file "
        f"(tasks that do: {', '.join(takers) or 'none installed'})"
    )


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
