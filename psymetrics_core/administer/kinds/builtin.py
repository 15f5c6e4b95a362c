"""Registers the built-in task kinds: questionnaire, free_text, judged and probe."""

from __future__ import annotations

from collections.abc import Callable

from psymetrics_core.administer.kinds.free_text import FreeTextKind
from psymetrics_core.administer.kinds.judged import JudgedKind
from psymetrics_core.administer.kinds.probe import ProbeKind
from psymetrics_core.administer.kinds.questionnaire import QuestionnaireKind
from psymetrics_core.pluginsys.hookspecs import hookimpl


@hookimpl
def register_task_kinds(register: Callable[..., None]) -> None:
    """The four kinds of the core."""
    for kind in (QuestionnaireKind(), FreeTextKind(), JudgedKind(), ProbeKind()):
        register(kind.name, kind)
