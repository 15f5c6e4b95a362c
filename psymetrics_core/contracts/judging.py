"""Judge stages: what a judged task declares, and the judge a ``CellRun`` hands its kind.

A stage's ``build`` makes one judge prompt per generation and its ``parse`` turns the judge's
reply into a ``Verdict`` (pure: no model calls). The run's judge (``administer.judge.Judge``)
satisfies ``StageJudge``: it sends a stage's prompts as one batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from psymetrics_core.base.types import Generation, Item, Prompt, Verdict

__all__ = ["JudgeStage", "StageJudge", "user_prompt"]


@dataclass(frozen=True)
class JudgeStage:
    """One judge stage of a judged task.

    ``build(item, generation, previous)`` returns the judge prompt for one generation (a
    ``Prompt``, or a plain text sent as the user message; None = do not judge this one);
    ``previous`` maps each earlier stage's name to its verdict on this generation.
    ``parse(text)`` turns the judge's reply into a ``Verdict`` (pure: no model calls).
    ``system`` is an optional system message for text prompts; ``max_new_tokens`` overrides
    the judge's default length for this stage (with ``at_least``, it is the least the reply
    gets: the judge's own length, ``--judge-max-new-tokens``, is used where it is larger). A
    stage with ``score`` is judged in ``logprob`` mode: no text is generated, the judge backend
    scores each of the prompt's options as the continuation of the prompt, and
    ``score(prompt, option_logprobs)`` (aligned with the prompt's options; empty when the
    backend returned none) is the verdict (``parse`` is then unused).
    """

    name: str
    build: Callable[[Item, Generation, Mapping[str, Verdict]], Prompt | str | None]
    parse: Callable[[str], Verdict]
    system: str | None = None
    max_new_tokens: int | None = None
    score: Callable[[Prompt, tuple[float, ...]], Verdict] | None = None
    at_least: bool = False

    def prompt(
        self, item: Item, generation: Generation, previous: Mapping[str, Verdict]
    ) -> Prompt | None:
        """The stage's prompt for ``generation`` (None when it is not judged)."""
        built = self.build(item, generation, previous)
        if built is None or isinstance(built, Prompt):
            return built
        return user_prompt(built, self.system)


def user_prompt(text: str, system: str | None = None) -> Prompt:
    """A chat prompt of ``text`` as the user message (after an optional system message)."""
    messages: list[dict[str, str]] = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": text})
    return Prompt(messages=tuple(messages), options=(), text=text)


class StageJudge(Protocol):
    """The judge a kind receives in ``CellRun.judge``; ``batch``: items per request where a
    stage puts several items in one prompt (the interview's option conversion; None: the
    stage's default)."""

    batch: int | None

    def check_stage(self, stage: JudgeStage, prompts: Sequence[Prompt]) -> None:
        """Refuse, in one line and before any request, prompts the judge cannot answer truly
        (e.g. a scored stage's continuations on a backend that cannot score them)."""
        ...

    def run_stage(
        self,
        task: str,
        stage: JudgeStage,
        requests: Sequence[tuple[Item, Prompt]],
        tag: Mapping[str, Any] | None = None,
    ) -> dict[str, Verdict]:
        """Judge every request of ``stage`` in one batch; the verdict per item id."""
        ...
