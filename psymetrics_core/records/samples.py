"""One ``samples.jsonl`` line (``SampleRecord``) and one ``judge.jsonl`` line (``JudgeRecord``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .results import RECORD_SCHEMA_VERSION

__all__ = ["PromptRecord", "OptionRecord", "ItemMeta", "SampleRecord", "JudgeRecord"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OptionRecord(_Strict):
    """One answer option as presented: its scored value and label."""

    value: int
    label: str


class PromptRecord(_Strict):
    """The chat messages sent and the options in the order presented."""

    messages: list[dict[str, Any]]
    options: list[OptionRecord] = Field(default_factory=list)


class ItemMeta(_Strict):
    """How the item is keyed: what an analysis needs besides the recorded ``keyed`` values."""

    scales: list[str] = Field(description="every scale whose score uses this item")
    reverse: bool
    scored: bool
    min: int | None = Field(description="lowest response code (None for free-text tasks)")
    max: int | None
    rescale: list[tuple[int, float]] | None = Field(
        default=None, description="the item's own value map after reverse keying"
    )
    centred: list[str] = Field(
        default_factory=list,
        description="scales scored minus the respondent's MRAT (centre: mrat)",
    )


class SampleRecord(_Strict):
    """One administered item: prompt, completion, parsed answer, keyed values, condition tag."""

    schema_version: Literal[1] = RECORD_SCHEMA_VERSION
    task: str
    form: str
    item: str
    prompt: PromptRecord
    rendered_prompt: str
    completion: str | None
    option_logprobs: dict[int, float] | None = None
    answer: int | None = Field(description="the parsed response code (None: not parsed)")
    parse_status: Literal["ok", "unparsed", "refused"]
    option_probs: dict[int, float] | None = None
    data: dict[str, Any] | None = Field(default=None, description="a free-text task's parse output")
    keyed: dict[str, float] | None = Field(
        default=None,
        description=(
            "questionnaires: the answer keyed for every scale it counts towards (reverse "
            "keying, rescaling, inversion; before MRAT centring), as scored; empty when "
            "unanswered or unscored"
        ),
    )
    mrat_term: float | None = Field(
        default=None,
        description=(
            "the answer's contribution to the respondent's mean rating over all scored items "
            "(MRAT): reverse keyed and rescaled by the item's own map"
        ),
    )
    condition: str
    conditions: list[str] = Field(default_factory=list)
    facets: dict[str, str] = Field(default_factory=dict)
    condition_info: dict[str, Any] = Field(default_factory=dict)
    repeat: int
    seed: int
    battery_prompt: int | None = None
    max_new_tokens: int | None = None
    item_meta: ItemMeta


class JudgeRecord(_Strict):
    """One judge-model call: the prompt it was given and what it answered."""

    model_config = ConfigDict(extra="allow")

    schema_version: Literal[1] = RECORD_SCHEMA_VERSION
    task: str
    item: str
    judge_model: str
    prompt: PromptRecord
    completion: str | None
