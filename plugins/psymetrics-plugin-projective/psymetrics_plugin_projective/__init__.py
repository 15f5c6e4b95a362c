"""psymetrics plugin: generative projective tests (Wang et al. 2026, "GenPT").

Tasks ``sct`` (sentence completion), ``tat`` (Thematic-Apperception-style stories) and
``rorschach`` (procedural inkblots, image models only): the evaluated model answers the stimuli,
an interpreter judge codes the answers (SCORS-G, SRAS, Rotter-style SCT scores) and a
diagnostician judge maps the indicators to Big Five levels, MBTI letters, depression and
suicide-ideation risk. Also the key-only questionnaire baselines ``bdi2`` and ``bss``
(item texts from the user). Adds the condition ``longctx=FILE`` and the command
the ``psym analyze`` section for projective runs (κ, DCR, |μΔ|, accuracy against labels;
also as ``psym projective-analyze``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from typing import Any

from psymetrics_core import data_files, hookimpl

__version__ = "0.1.0"


@hookimpl
def register_instruments(register: Callable[..., None]) -> None:
    """Register the ``sct``, ``tat`` and ``rorschach`` tasks (built when a command needs one)
    and the BDI-II and BSS keys."""
    from psymetrics_core import LazyInstrument

    for task in ("sct", "tat", "rorschach"):
        register(LazyInstrument(task, partial(_task, task)))
    for spec in data_files(__name__):
        register(spec)


@cache
def _tasks() -> dict[str, Any]:
    from .tasks import make_tasks

    return {t.id: t for t in make_tasks()}


def _task(task_id: str) -> Any:
    return _tasks()[task_id]


@hookimpl
def register_task_kinds(register: Callable[..., None]) -> None:
    """Register the ``projective`` kind (session-level judge stages, the Rorschach dialogue)."""
    from .kind import ProjectiveKind

    register(ProjectiveKind.name, ProjectiveKind())


@hookimpl
def register_conditions(register: Callable[..., None]) -> None:
    """Register ``longctx=FILE`` (a counselling dialogue before every elicitation)."""
    from .longctx import longctx_condition

    register(
        "longctx",
        longctx_condition,
        description="prepend a counselling dialogue from FILE (Wang et al. 2026)",
        facet="context",
        takes_argument=True,
    )


@hookimpl
def register_commands(cli: Any) -> None:
    """Add ``psym projective-analyze``."""
    from .report_cmd import projective_analyze

    cli.add_command(projective_analyze)


@hookimpl
def register_analyses(register: Callable[..., None]) -> None:
    """``psym analyze`` section: κ, DCR, |μΔ|, accuracy against labels, judge agreement (a
    ``module:function`` reference: imported only when ``psym analyze`` runs it)."""
    register("projective", f"{__name__}.report_cmd:analyze_section")
