"""One ``samples.jsonl`` line (``SampleRecord``) and one ``judge.jsonl`` line (``JudgeRecord``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from psymetrics_core.base.models import Strict
from psymetrics_core.base.versions import RECORD_SCHEMA_VERSION
from psymetrics_core.records.fields import Count, Int, Name, Number, Rate

__all__ = [
    "PromptRecord",
    "OptionRecord",
    "ImageRecord",
    "ItemMeta",
    "SampleRecord",
    "InterviewRecord",
    "RatingRecord",
    "VerdictRecord",
    "JudgeRecord",
]


class OptionRecord(Strict):
    """One answer option as presented: its scored value and label (and, for a probe task's
    log-likelihood, the continuation that was scored instead of the value, and ``turn_end``
    when the end of the assistant turn was scored after it)."""

    value: int
    label: str
    continuation: str | None = None
    turn_end: bool | None = None


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

    scales: list[Name] = Field(description="every scale whose score uses this item")
    reverse: bool = False
    scored: bool
    min: Int | None = Field(default=None, description="lowest response code (questionnaires)")
    max: Int | None = None
    rescale: list[tuple[Int, Number]] | None = Field(
        default=None, description="the item's own value map after reverse keying"
    )
    centred: list[Name] = Field(
        default_factory=list,
        description="scales scored minus the respondent's MRAT (centre: mrat)",
    )
    meta: dict[str, Any] | None = Field(
        default=None, description="a free-text task's item attributes (e.g. gender, city)"
    )

    @model_validator(mode="after")
    def _range(self) -> ItemMeta:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self


class RatingRecord(Strict):
    """The interview judge's rating of one open answer."""

    value: Int | None = Field(description="the option the judge chose (None: none or unread)")
    status: Literal["ok", "unparsed", "refused"]
    reason: str | None = None
    attempts: Count = Field(description="judge requests this item took (retries included)")


class InterviewRecord(Strict):
    """An interviewed item: the open question, the judge method, imputation and the rating."""

    question: str
    statement: str | None = Field(
        default=None,
        description="the item's statement as the judge saw it (kept so that psym judge can "
        "re-judge an instrument whose texts came from --items)",
    )
    method: Name
    impute: Literal["midpoint"] | None = None
    rating: RatingRecord


class SampleRecord(Strict):
    """One administered item: prompt, completion, parsed answer, keyed values, condition tag."""

    schema_version: Literal[1] = RECORD_SCHEMA_VERSION
    task: Name
    kind: Name = Field(default="questionnaire", description="the task kind (free_text, ...)")
    form: Name
    item: Name
    prompt: PromptRecord
    rendered_prompt: str
    completion: str | None
    text: str | None = Field(default=None, description="a free-text task's generation")
    option_logprobs: dict[int | str, float] | None = Field(
        default=None, description="log-likelihood per option value (or label, probe tasks)"
    )
    answer: Int | None = Field(description="the parsed response code (None: not parsed)")
    parse_status: Literal["ok", "unparsed", "refused"]
    option_probs: dict[Int, Rate] | None = None
    option_mass: Rate | None = Field(
        default=None,
        description=(
            "logprob mode: the probability the model gave the options together before "
            "renormalising (1 - option_mass fell outside them)"
        ),
    )
    stated_shares: dict[Int, Rate] | None = Field(
        default=None,
        description=(
            "verbalized administration: the share of people the model said would choose each "
            "option, parsed strictly (None: the reply did not parse; see parse_status)"
        ),
    )
    data: dict[str, Any] | None = Field(default=None, description="a free-text task's parse output")
    keyed: dict[Name, Number] | None = Field(
        default=None,
        description=(
            "questionnaires: the answer keyed for every scale it counts towards (reverse "
            "keying, rescaling, inversion; before MRAT centring), as scored; empty when "
            "unanswered or unscored"
        ),
    )
    mrat_term: Number | None = Field(
        default=None,
        description=(
            "the answer's contribution to the respondent's mean rating over all scored items "
            "(MRAT): reverse keyed and rescaled by the item's own map"
        ),
    )
    condition: Name
    conditions: list[Name] = Field(default_factory=list)
    facets: dict[Name, Name] = Field(default_factory=dict)
    condition_info: dict[str, Any] = Field(default_factory=dict)
    repeat: Count
    seed: Int
    battery_prompt: Count | None = None
    max_new_tokens: Count | None = None
    interview: InterviewRecord | None = Field(
        default=None, description="interview administration: question, judge method and rating"
    )
    item_meta: ItemMeta

    @model_validator(mode="after")
    def _answer_in_range(self) -> SampleRecord:
        lo, hi, a = self.item_meta.min, self.item_meta.max, self.answer
        if a is not None and lo is not None and hi is not None and not lo <= a <= hi:
            raise ValueError(f"'answer' {a} is outside the item's response codes {lo}..{hi}")
        return self


class VerdictRecord(Strict):
    """A judge stage's parsed verdict."""

    value: Any = None
    status: Literal["ok", "unparsed", "refused"]
    reason: str | None = None
    explanation: str | None = None


class JudgeRecord(Strict):
    """One judge-model call: the stage, the prompt, the reply and its parsed verdict."""

    schema_version: Literal[1] = RECORD_SCHEMA_VERSION
    task: Name
    item: Name
    stage: Name | None = Field(default=None, description="None: a legacy Judge.complete call")
    judge_model: str
    prompt: PromptRecord
    completion: str | None
    verdict: VerdictRecord | None = None
    condition: str | None = None
    conditions: list[str] = Field(default_factory=list)
    facets: dict[str, str] = Field(default_factory=dict)
    condition_info: dict[str, Any] = Field(default_factory=dict)
    repeat: Count | None = None
    seed: Int | None = None
    attempt: Count | None = Field(
        default=None, description="interview judge: 0 for the first request, then each retry"
    )
    batches: dict[Name, list[Name]] | None = Field(
        default=None,
        description="interview judge: the item ids of each batch sent in this round (this "
        "line's own batch is the one named by 'item')",
    )
