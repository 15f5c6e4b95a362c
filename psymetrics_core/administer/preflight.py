"""Checks of run options that must fail before any model is loaded or any request is paid."""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from psymetrics_core.base.bounds import bound
from psymetrics_core.base.errors import PsymError, SpecError
from psymetrics_core.base.types import Instrument

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = [
    "check_label",
    "check_generation_options",
    "check_run_numbers",
    "check_parser",
    "check_task_options",
]


def check_generation_options(
    temperature: float, max_new_tokens: int | None, judge_max_new_tokens: int | None = None
) -> None:
    """``temperature`` and the token limits (when given) within their bounds
    (``psymetrics_core.base.bounds``)."""
    bound("--temperature").check(temperature)
    for name, value in (
        ("--max-new-tokens", max_new_tokens),
        ("--judge-max-new-tokens", judge_max_new_tokens),
    ):
        if value is not None:
            bound(name).check(value)


def check_run_numbers(
    limit: int | None, repeats: int, seed: int, concurrency: int | None = None
) -> None:
    """The numbers of a run (``evaluate``'s and a plan's) within their bounds, before any work:
    one line naming the option, the value and the bound."""
    for name, value in (
        ("--limit", limit),
        ("--repeats", repeats),
        ("--seed", seed),
        ("--concurrency", concurrency),
    ):
        if value is not None:
            bound(name).check(value)


MAX_LABEL = 200
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def check_label(value: str, option: str = "--label") -> str:
    """A run's model label (results, tables, exports, reports): ``value`` stripped, refused in
    one line when empty, longer than ``MAX_LABEL``, or holding a path separator or a control,
    line-breaking or bidirectional-override character."""

    label = value.strip()
    if not label:
        raise PsymError(f"{option}: expected a name, got an empty value")
    if len(label) > MAX_LABEL:
        raise PsymError(f"{option}: expected at most {MAX_LABEL} characters, got {len(label)}")
    for ch in label:
        if ch in "/\\":
            raise PsymError(f"{option} {label!r}: a name may not hold a path separator ({ch!r})")
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in _BIDI:
            raise PsymError(
                f"{option} {label!r}: a name may not hold control or line-break characters "
                f"(U+{ord(ch):04X})"
            )
    return label


def check_parser(inst: Instrument, session: Session) -> None:
    """The parser an instrument names must be registered in ``session`` (else it fails only
    after requests)."""
    known = session.parsers()
    if inst.parser not in known:
        close = difflib.get_close_matches(inst.parser, list(known), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise SpecError(
            inst.spec_path or inst.id,
            f"unknown parser {inst.parser!r}{hint} (known: {', '.join(sorted(known))})",
            field="parser",
        )


def check_task_options(tasks: Sequence[str], options: Mapping[str, object] | None) -> None:
    """Options (``--task-arg TASK.KEY=VALUE``) must name a task of this run (typos are errors)."""
    for task in options or {}:
        if task != "*" and task not in tasks:
            close = difflib.get_close_matches(task, list(tasks), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise PsymError(
                f"--task-arg {task}.KEY=...: '{task}' is not among --tasks "
                f"({', '.join(tasks)}){hint}"
            )
