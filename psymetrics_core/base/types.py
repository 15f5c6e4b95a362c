"""Value types that cross the plugin boundary: instruments, items, prompts, answers, scores."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Option",
    "ResponseScale",
    "Item",
    "ScaleDef",
    "NormGroup",
    "HumanLoadings",
    "Instrument",
    "ImagePart",
    "Prompt",
    "Completion",
    "Answer",
    "ScaleScore",
    "PluginInfo",
    "Generation",
    "Verdict",
    "Score",
    "VERDICT_STATUSES",
]


@dataclass(frozen=True)
class Option:
    """One answer option: the numeric value that is scored and the label shown to the model.

    ``continuation`` (probe tasks) is a text whose log-likelihood after the prompt is scored in
    ``logprob`` mode instead of the value (e.g. an inventory's items in some order); backends
    score :attr:`scored_text` and only those declaring ``supports_continuations`` take it.
    ``turn_end`` asks for the continuation followed by the end of the assistant turn as the
    backend's chat template writes it (e.g. ``<|im_end|>``): the log-probability of a whole
    assistant reply (Song et al. 2025); only backends declaring ``supports_turn_end`` take it.
    """

    value: int
    label: str
    continuation: str | None = None
    turn_end: bool = False

    @property
    def scored_text(self) -> str:
        """What a backend scores in ``logprob`` mode: the continuation, else ``str(value)``."""
        return self.continuation if self.continuation is not None else str(self.value)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view (``continuation`` only when set, so other prompts' cache keys and
        records are those of options without it)."""
        out: dict[str, Any] = {"value": self.value, "label": self.label}
        if self.continuation is not None:
            out["continuation"] = self.continuation
        if self.turn_end:
            out["turn_end"] = True
        return out


@dataclass(frozen=True)
class ResponseScale:
    """A response format: an ordered set of numeric options, optionally with its own instruction."""

    name: str
    min: int
    max: int
    options: tuple[Option, ...]
    instruction: str | None = None
    agree: str = "high"  # which end means agreement: "high" (max) or "low" (min)

    def values(self) -> list[int]:
        """The valid numeric codes, ascending."""
        return [o.value for o in self.options]


@dataclass(frozen=True)
class Item:
    """One questionnaire item, numbered by its official 1-based id."""

    id: str
    text: str
    scales: tuple[str, ...]
    reverse: bool = False
    response_scale: str = "default"
    flag: str | None = None  # "attention_check", "filler" or None
    # value map applied after reverse keying, e.g. SR2K item 3: ((1, 1.0), (2, 2.5), (3, 4.0))
    rescale: tuple[tuple[int, float], ...] | None = None
    # free-form attributes of a behaviour task's prompt (e.g. gender, city); not compared
    meta: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    # the item as an open question (items.csv ``question``), asked by the interview mode
    question: str | None = None

    @property
    def scored(self) -> bool:
        """Whether the item counts towards any scale (attention checks and fillers do not)."""
        return self.flag is None and bool(self.scales)


@dataclass(frozen=True)
class NormGroup:
    """Published human norms of one scale in one group (e.g. "Male"): mean, SD and sample size."""

    group: str
    mean: float
    sd: float
    source: str
    n: int | None = None
    year: int | None = None
    note: str = ""


@dataclass(frozen=True)
class HumanLoadings:
    """Published human factor loadings of an instrument (``human_loadings:`` in its spec).

    ``loadings`` maps item id -> one loading per factor (``factors``), in the items' raw
    direction as published: a reverse-keyed item keeps its negative loading (``psym analyze``
    flips it to the keyed direction of its EFA). ``file`` is the CSV as the spec names it.
    """

    source: str
    file: str
    factors: tuple[str, ...]
    loadings: tuple[tuple[str, tuple[float, ...]], ...]  # (item, (l1, l2, ...)), table order
    rotation: str | None = None
    method: str | None = None
    n: int | None = None
    note: str = ""

    def describe(self) -> str:
        """One line: source, factors, rotation, method and n as published."""
        how = ", ".join(x for x in (self.method, self.rotation) if x)
        n = f", n = {self.n}" if self.n else ""
        return (
            f"{self.source}: {len(self.factors)} factor(s) over {len(self.loadings)} "
            f"items ({', '.join(self.factors)}){f'; {how}' if how else ''}{n}"
        )


@dataclass(frozen=True)
class ScaleDef:
    """A scale (or subscale) and how its score is computed."""

    name: str
    method: str = "mean"  # "mean" or "sum"
    description: str = ""
    include_all: bool = False  # a total over every scored item
    of_scales: tuple[str, ...] = ()  # a union of other scales' items (e.g. higher-order values)
    centre: str | None = None  # "mrat": minus the respondent's mean over all scored items
    invert: bool = False  # score each keyed item as lo + hi - x (flip the whole orientation)
    higher_is: str = ""  # what a higher score means, e.g. "more symbolic racism"
    # per-scale replacement of items' rescale maps: ((item id, ((value, target), ...)), ...)
    rescale: tuple[tuple[str, Any], ...] = ()
    norms: tuple[NormGroup, ...] = ()  # human norm groups, the default (first) group first
    # adjectives describing a person high on the scale (interview: dimension-aware conversion)
    adjectives: tuple[str, ...] = ()


@dataclass
class Instrument:
    """A psychometric instrument as loaded from its YAML spec and item CSV(s)."""

    id: str
    name: str
    version: str
    citation: str
    license_status: str
    redistributable: bool | None
    item_source: str
    scoring_rule: str
    response_scales: dict[str, ResponseScale]
    scales: dict[str, ScaleDef]
    forms: dict[str, list[Item]]
    prompt_template: str
    instruction: str
    system_prompt: str | None = None
    eos: str = ":"
    parser: str = "first_valid_int"
    notes: str = ""
    texts_shipped: bool = True  # False: the key ships, item texts come from the user
    spec_path: Path | None = None
    # form -> its item CSV as the spec names it, relative to the spec's folder
    form_files: dict[str, str] = field(default_factory=dict)
    plugin: PluginInfo | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # published human factor loadings (``human_loadings:`` in the spec), None when none ship
    human_loadings: HumanLoadings | None = None
    # per-run task options (``psym eval --task-arg TASK.KEY=VALUE``), set by ``evaluate()``
    options: dict[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """The task kind that runs this instrument: ``"questionnaire"`` (the default for specs),
        ``"free_text"``, ``"judged"``, ``"probe"`` or a plugin's own (``register_task_kinds``)."""
        return str(self.extra.get("kind", "questionnaire"))

    @property
    def items(self) -> list[Item]:
        """Items of the default ('original') form."""
        return self.forms["original"]

    def scale_items(self, scale: str, form: str = "original") -> list[Item]:
        """The scored items that belong to ``scale`` in ``form``."""
        self.scales[scale]  # KeyError for an unknown scale, even when the form has no items
        return [it for it in self.forms[form] if self.counts_towards(it, scale)]

    def counts_towards(self, item: Item, scale: str) -> bool:
        """Whether ``item`` is scored and belongs to ``scale`` (a total takes every scored
        item, a union of scales each item of one of them)."""
        sdef = self.scales[scale]
        if not item.scored:
            return False
        if sdef.include_all:
            return True
        if sdef.of_scales:
            return not set(item.scales).isdisjoint(sdef.of_scales)
        return scale in item.scales

    def norm_groups(self) -> list[str]:
        """Names of the norm groups of any scale, in spec order (the first is the default)."""
        names: list[str] = []
        for sdef in self.scales.values():
            names += [g.group for g in sdef.norms if g.group not in names]
        return names

    def response_scale_for(self, item: Item) -> ResponseScale:
        """The response scale that ``item`` is answered on."""
        return self.response_scales[item.response_scale]


@dataclass(frozen=True)
class ImagePart:
    """An image shown with a prompt's last user message: PNG or JPEG bytes and the MIME type."""

    data: bytes = field(repr=False)
    mime: str = "image/png"

    @property
    def sha256(self) -> str:
        """SHA-256 of the image bytes (what run records and cache keys carry)."""

        return hashlib.sha256(self.data).hexdigest()

    def data_url(self) -> str:
        """The image as a ``data:`` URL (base64), as OpenAI-compatible chat APIs take it."""

        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt: chat messages plus the options in the order presented.

    ``images`` belong to the last user message (a backend without ``supports_images`` must
    refuse such a prompt, never drop the images).
    """

    messages: tuple[dict[str, str], ...]
    options: tuple[Option, ...]
    text: str  # the user-visible text of the last user message
    images: tuple[ImagePart, ...] = ()

    @property
    def has_continuations(self) -> bool:
        """Whether an option carries a continuation to score (see ``Option.continuation``)."""
        return any(o.continuation is not None for o in self.options)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view for run records (images by MIME type, size and SHA-256)."""
        out: dict[str, Any] = {
            "messages": list(self.messages),
            "options": [o.to_json() for o in self.options],
        }
        if self.images:
            out["images"] = [
                {"mime": im.mime, "bytes": len(im.data), "sha256": im.sha256} for im in self.images
            ]
        return out


@dataclass(frozen=True)
class Completion:
    """What a backend returned for one prompt."""

    text: str | None = None
    option_logprobs: tuple[float, ...] | None = None  # aligned with Prompt.options
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """A parsed answer. ``value`` is None when unparsed or refused; ``status`` says which."""

    value: int | None
    status: str  # "ok", "unparsed", "refused"
    probabilities: dict[int, float] | None = None  # option value -> probability (logprob mode)
    data: dict[str, Any] | None = None  # free-form parse output (e.g. behaviour tasks' text)


@dataclass(frozen=True)
class ScaleScore:
    """A scale score with the item counts behind it."""

    scale: str
    score: float | None
    n_items: int
    n_answered: int
    method: str


@dataclass(frozen=True)
class PluginInfo:
    """Where something came from: plugin name, distribution and version."""

    name: str
    distribution: str | None = None
    version: str | None = None


VERDICT_STATUSES = ("ok", "unparsed", "refused")


@dataclass(frozen=True)
class Generation:
    """A free-text task's result for one item: the text the model wrote, as the task parsed it.

    ``status`` is ``"ok"``, ``"unparsed"`` (e.g. empty) or ``"refused"``; ``data`` holds what
    the task's ``parse`` extracted (word counts, recommendations, ...). Not an ``Answer``: a
    generation has no option value.
    """

    item: Item
    text: str
    status: str = "ok"
    data: dict[str, Any] = field(default_factory=dict)
    option_logprobs: tuple[float, ...] | None = None  # probes scored by log-likelihood

    @property
    def ok(self) -> bool:
        """Whether the generation can be scored."""
        return self.status == "ok"


@dataclass(frozen=True)
class Verdict:
    """A judge model's coded decision on one generation in one judge stage.

    ``value`` is None unless ``status == "ok"``; ``reason`` says why a verdict is missing.
    """

    value: Any = None
    status: str = "ok"  # "ok", "unparsed", "refused"
    reason: str | None = None
    explanation: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the judge's reply was parsed into a value."""
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view for run records."""
        return {
            "value": self.value,
            "status": self.status,
            "reason": self.reason,
            "explanation": self.explanation,
        }


@dataclass(frozen=True)
class Score:
    """One score of a non-questionnaire task (an odds ratio, a share, a mean difference ...).

    ``value`` is None when the statistic is undefined, and then ``reason`` says why (never 0 or
    NaN in its place). ``n`` is the number of units (generations, verdicts) it rests on.
    """

    name: str
    value: float | None
    reason: str | None = None
    kind: str = "mean"  # "odds_ratio", "mean", "share", "difference", ...
    n: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.value is None and not self.reason:
            raise ValueError(f"score {self.name!r} is None without a reason")

    def to_json(self, n_items: int, n_answered: int) -> dict[str, Any]:
        """The ``results.json`` view (``score`` and item counts as for questionnaire scales)."""
        return {
            "score": self.value,
            "reason": self.reason,
            "kind": self.kind,
            "method": self.kind,
            "n": n_answered if self.n is None else self.n,
            "n_items": n_items,
            "n_answered": n_answered,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            **({"detail": self.detail} if self.detail else {}),
        }


@dataclass(frozen=True)
class LazyInstrument:
    """A task a plugin builds in code, registered by id and built when it is first needed
    (``register(LazyInstrument("refletter", make_instrument))``): commands that do not run or
    list it never pay for building it. ``build()`` must return an ``Instrument`` whose id is
    ``id``."""

    id: str
    build: Any  # Callable[[], Instrument]
