"""Registers the core's administration modes (``item-by-item``, ``battery``, ``verbalized``,
``interview``, ``interview-dimensions``, ``interview-logprob``, ``interview-expert``,
``interview-expert-all``) and the conditions that select ``verbalized`` and the interviews
(``battery`` and ``single`` are registered with the other built-in conditions)."""

from __future__ import annotations

from collections.abc import Callable

from psymetrics_core.administer.administration.battery import Battery
from psymetrics_core.administer.administration.interview import (
    INTERVIEW,
    INTERVIEW_DIMENSIONS,
    Interview,
    InterviewDimensions,
)
from psymetrics_core.administer.administration.interview_expert import (
    INTERVIEW_EXPERT,
    INTERVIEW_EXPERT_ALL,
    InterviewExpert,
    InterviewExpertAll,
)
from psymetrics_core.administer.administration.interview_logprob import (
    INTERVIEW_LOGPROB,
    InterviewLogprob,
)
from psymetrics_core.administer.administration.item_by_item import ItemByItem
from psymetrics_core.administer.administration.verbalized import VERBALIZED, Verbalized
from psymetrics_core.contracts.conditions import Condition
from psymetrics_core.pluginsys.hookspecs import hookimpl

_STATE = "the model states what share of people choose each option (Meister et al., 2024)"
_INTERVIEW = (
    "each item asked as an open question, the judge converting answers to options "
    "(Wang et al., 2024); a 'none' stays missing"
)
_DIMENSIONS = (
    "the interview, the judge converting one scale's answers at a time on its adjectives "
    "(Wang et al., 2024)"
)
_LOGPROB = (
    "the interview, the judge's backend scoring each option's value and 'none' as its reply "
    "to one answer (no text to parse: any local model can judge)"
)
_EXPERT = (
    "the interview, the judge scoring each scale from batches of 3-4 question-answer pairs "
    "(expert rating, Wang et al., 2024)"
)
_EXPERT_ALL = (
    "the interview, the judge scoring each scale from all its question-answer pairs at once "
    "(expert rating, Wang et al., 2024)"
)


@hookimpl
def register_administrations(register: Callable[..., None]) -> None:
    """The modes of the core."""
    register(ItemByItem.name, ItemByItem(), description="one prompt per item (the default)")
    register(
        Battery.name,
        Battery(),
        description='all items in one prompt, answered "index: score" (Huang et al., 2024)',
    )
    register(Verbalized.name, Verbalized(), description=_STATE)
    register(Interview.name, Interview(), description=_INTERVIEW)
    register(InterviewDimensions.name, InterviewDimensions(), description=_DIMENSIONS)
    register(InterviewLogprob.name, InterviewLogprob(), description=_LOGPROB)
    register(InterviewExpert.name, InterviewExpert(), description=_EXPERT)
    register(InterviewExpertAll.name, InterviewExpertAll(), description=_EXPERT_ALL)


@hookimpl(trylast=True)
def register_conditions(register: Callable[..., None]) -> None:
    """``--condition verbalized`` / ``interview`` / ``interview-dimensions`` /
    ``interview-logprob`` / ``interview-expert`` / ``interview-expert-all``: those modes (facet
    ``administration``)."""
    for name, desc in (
        (VERBALIZED, _STATE),
        (INTERVIEW, _INTERVIEW),
        (INTERVIEW_DIMENSIONS, _DIMENSIONS),
        (INTERVIEW_LOGPROB, _LOGPROB),
        (INTERVIEW_EXPERT, _EXPERT),
        (INTERVIEW_EXPERT_ALL, _EXPERT_ALL),
    ):
        cond = Condition(name, administration=name)
        register(name, lambda _arg, _c=cond: _c, description=desc, facet="administration")
