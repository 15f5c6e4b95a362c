"""One ``samples.jsonl`` line (``SampleRecord``) and one ``judge.jsonl`` line (``JudgeRecord``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from psymetrics_core.base.models import Strict
from psymetrics_core.base.versions import RECORD_SCHEMA_VERSION

__all__ = [
    "PromptRecord",
    "OptionRecord",
    "ImageRecord",
    "ItemMeta",
    "SampleRecord",
    "VerdictRecord",
    "JudgeRecord",
]


class OptionRecord(Strict):
    """One answer option as presented: its scored value and label (and, for a probe task's
    log-likelihood, the continuation that was scored instead of the value)."""

    value: int
    label: str
    continuation: str | None = None


class ImageRecord(Strict):
    """An image sent with the prompt, recorded by type, size and hash (not its bytes)."""

    mime: str
    bytes: int
    sha256: str


class PromptRecord(Strict):
    """The chat messages sent, the options in the order presented and any images."""

    messages: list[dict[str, Any]]
    options: list[OptionRecord] = Field(default_factory=list)
    images: list[ImageRecord] | None = None


class ItemMeta(Strict):
    """How the item is keyed: what an analysis needs besides the recorded ``keyed`` values."""

    scales: list[str] = Field(description="every scale whose score uses this item")
    reverse: bool = False
    scored: bool
    min: int | None = Field(default=None, description="lowest response code (questionnaires)")
    max: int | None = None
    rescale: list[tuple[int, float]] | None = Field(
        default=None, description="the item's own value map after reverse keying"
    )
    centred: list[str] = Field(
        default_factory=list,
        description="scales scored minus the respondent's MRAT (centre: mrat)",
    )
    meta: dict[str, Any] | None = Field(
        default=None, description="a free-text task's item attributes (e.g. gender, city)"
    )


class SampleRecord(Strict):
    """One administered item: prompt, completion, parsed answer, keyed values, condition tag."""

    schema_version: Literal[1] = RECORD_SCHEMA_VERSION
    task: str
    kind: str = Field(default="questionnaire", description="the task kind (free_text, ...)")
    form: str
    item: str
    prompt: PromptRecord
    rendered_prompt: str
    completion: str | None
    text: str | None = Field(default=None, description="a free-text task's generation")
    option_logprobs: dict[int | str, float] | None = Field(
        default=None, description="log-likelihood per option value (or label, probe tasks)"
    )
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


class VerdictRecord(Strict):
    """A judge stage's parsed verdict."""

    value: Any = None
    status: Literal["ok", "unparsed", "refused"]
    reason: str | None = None
    explanation: str | None = None


class JudgeRecord(Strict):
    """One judge-model call: the stage, the prompt, the reply and its parsed verdict."""

    schema_version: Literal[1] = RECORD_SCHEMA_VERSION
    task: str
    item: str
    stage: str | None = Field(default=None, description="None: a legacy Judge.complete call")
    judge_model: str
    prompt: PromptRecord
    completion: str | None
    verdict: VerdictRecord | None = None
    condition: str | None = None
    conditions: list[str] = Field(default_factory=list)
    facets: dict[str, str] = Field(default_factory=dict)
    condition_info: dict[str, Any] = Field(default_factory=dict)
    repeat: int | None = None
    seed: int | None = None
