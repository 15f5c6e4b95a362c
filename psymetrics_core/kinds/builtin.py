"""Registers the built-in task kinds: questionnaire, free_text, judged and probe."""

from __future__ import annotations

from collections.abc import Callable

from ..hookspecs import hookimpl
from .free_text import FreeTextKind
from .judged import JudgedKind
from .probe import ProbeKind
from .questionnaire import QuestionnaireKind


@hookimpl
def register_task_kinds(register: Callable[..., None]) -> None:
    """The four kinds of the core."""
    for kind in (QuestionnaireKind(), FreeTextKind(), JudgedKind(), ProbeKind()):
        register(kind.name, kind)
