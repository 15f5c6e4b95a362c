"""``results.json``: run settings, provenance and one entry per task (``ResultsRecord``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from psymetrics_core.base.models import Open, Strict
from psymetrics_core.base.versions import RECORD_SCHEMA_VERSION
from psymetrics_core.records.fields import Count, Int, Name, Number, Rate
from psymetrics_core.records.population_task import POPULATION_CONDITION

__all__ = [
    "RECORD_SCHEMA_VERSION",
    "ScaleEntry",
    "RunScale",
    "Indicator",
    "RunSummary",
    "InstrumentInfo",
    "Spread",
    "IndicatorSpread",
    "PopulationGroup",
    "TaskEntry",
    "ResultsRecord",
    "RecordDigest",
    "DistributionInfo",
]


def check_counts(n_items: int | None, **parts: int | None) -> None:
    """Each of ``parts`` (answered, unparsed, refused) at most ``n_items`` (ValueError)."""
    for name, n in parts.items():
        if n_items is not None and n is not None and n > n_items:
            raise ValueError(f"{name} ({n}) is more than n_items ({n_items})")


class ScaleEntry(Open):
    """One scale's score with the item counts behind it (free-text tasks may add detail)."""

    score: Number | None = Field(description="None when no item of the scale was answered")
    n_items: Count
    n_answered: Count
    method: Name
    z: Number | None = None
    norm: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _counts(self) -> ScaleEntry:
        check_counts(self.n_items, n_answered=self.n_answered)
        return self


class RunScale(Open):
    """A scale's score in one administration (``tasks.<task>.runs[].scales``)."""

    score: Number | None = None
    n_items: Count | None = None
    n_answered: Count | None = None
    method: Name | None = None
    z: Number | None = None

    @model_validator(mode="after")
    def _counts(self) -> RunScale:
        check_counts(self.n_items, n_answered=self.n_answered)
        return self


class Indicator(Open):
    """One validity indicator of an answer pattern (``instruments.indicators``)."""

    value: Number | None
    threshold: str | None = None
    fired: bool
    n: Count | None = None
    reason: str | None = None
    detail: dict[str, Any] | None = None


class RunSummary(Strict):
    """One (condition, repeat) administration of a task, as kept in ``tasks.<task>.runs``."""

    condition: Name
    facets: dict[Name, Name] = Field(default_factory=dict)
    repeat: Count
    seed: Int
    form: Name
    n_items: Count | None
    n_answered: Count | None
    n_unparsed: Count | None = None
    n_refused: Count | None = None
    parse_rate: Rate | None = None
    indicators: dict[Name, Indicator] | None = Field(
        default=None, description="validity indicators of this administration's answers"
    )
    scales: dict[Name, RunScale]

    @model_validator(mode="after")
    def _counts(self) -> RunSummary:
        check_counts(
            self.n_items,
            n_answered=self.n_answered,
            n_unparsed=self.n_unparsed,
            n_refused=self.n_refused,
        )
        return self


class InstrumentInfo(Strict):
    """Citation, licence, item source, scoring rule and plugin of the instrument used."""

    id: str
    name: str
    version: str
    citation: str
    license_status: str
    item_source: str
    scoring_rule: str
    item_texts: Literal["shipped", "user-supplied"]
    plugin: str | None
    distribution: str | None
    plugin_version: str | None


class Spread(Strict):
    """A number's distribution across a population's respondent cells (sample SD, n - 1)."""

    n: Count
    mean: Number | None
    sd: Number | None
    min: Number | None
    max: Number | None
    reason: str | None = None


class IndicatorSpread(Spread):
    """A validity indicator across respondent cells, with how many cells it flagged."""

    n_fired: Count


class PopulationGroup(Strict):
    """A population run's task across its respondents, for one level of the run's other
    conditions (``group``; "" when there is none): ``tasks.<task>.population[]``."""

    group: Name
    n_cells: Count = Field(description="administrations: respondents x repeats")
    n_respondents: Count
    n_degenerate: Count = Field(description="cells flagged by a validity indicator")
    scales: dict[Name, Spread]
    indicators: dict[Name, IndicatorSpread] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _counts(self) -> PopulationGroup:
        for name in ("n_respondents", "n_degenerate"):
            if getattr(self, name) > self.n_cells:
                raise ValueError(f"{name} ({getattr(self, name)}) is more than n_cells")
        return self


class TaskEntry(Open):
    """A task's results: every administration in ``runs`` and, above it, the first one's scores
    (``runs[0]``) or, for a population run, the whole population: counts summed over every cell,
    each scale's population mean, and the population entry ``population`` (what every screen of
    such a run shows; ``records.population_task``). Free-text tasks add their own detail fields
    (counts, odds ratios, ...; a population run's entry leaves them out: they are one cell's)."""

    scales: dict[Name, ScaleEntry]
    n_items: Count
    n_answered: Count
    n_unparsed: Count
    n_refused: Count
    parse_rate: Rate | None
    norm_group: Name | None = None
    indicators: dict[Name, Indicator] | None = Field(
        default=None,
        description="validity indicators of the answer pattern (instruments.indicators)",
    )
    instrument: InstrumentInfo
    prompt_template: str
    condition: Name
    facets: dict[Name, Name] = Field(default_factory=dict)
    repeat: Count
    seed: Int
    form: Name
    kind: Name = "questionnaire"
    settings: dict[str, Any] | None = None
    options: dict[str, str] | None = None
    runs: list[RunSummary] = Field(min_length=1)
    population: list[PopulationGroup] | None = Field(
        default=None,
        description="population runs only: the task across respondents, what every screen "
        "shows (the fields above are then over every cell: counts summed, scores the mean)",
    )

    @model_validator(mode="after")
    def _consistent(self) -> TaskEntry:
        check_counts(
            self.n_items,
            n_answered=self.n_answered,
            n_unparsed=self.n_unparsed,
            n_refused=self.n_refused,
        )
        if self.population is None:
            same_as_first_run(self)
        else:
            sums_of_runs(self)
        seen: set[tuple[str, int]] = set()
        for i, run in enumerate(self.runs):
            if (run.condition, run.repeat) in seen:
                raise ValueError(
                    f"runs.{i} repeats condition {run.condition!r}, repeat {run.repeat} "
                    "(each administration once)"
                )
            seen.add((run.condition, run.repeat))
        return self

    # Extra fields are allowed on every kind: the ``aggregate`` hook is a plugin extension point
    # and a plugin may add its own detail (e.g. the 16-type test's ``type`` and ``role``); the
    # fields above stay typed and required.


def same_as_first_run(entry: TaskEntry) -> None:
    """The task-level fields (the first administration, which ``psym report`` shows) equal
    ``runs[0]`` (which ``psym export scores`` lists): a ValueError naming the field if not."""
    first = entry.runs[0]
    pairs: list[tuple[str, Any, Any]] = [
        (k, getattr(entry, k), getattr(first, k))
        for k in ("condition", "repeat", "seed", "n_items", "n_answered")
    ]
    for name, scale in entry.scales.items():
        other = first.scales.get(name)
        if other is None:
            raise ValueError(f"scale {name!r} is not in runs.0.scales")
        for k in ("score", "n_items", "n_answered"):
            pairs.append((f"scales.{name}.{k}", getattr(scale, k), getattr(other, k)))
    for field, top, run in pairs:
        if top != run:
            raise ValueError(
                f"'{field}' ({top!r}) differs from the first administration's "
                f"'runs.0.{field}' ({run!r}); a report and an export would disagree"
            )


def sums_of_runs(entry: TaskEntry) -> None:
    """A population run's task-level counts equal their sums over ``runs`` and its condition is
    the population (``records.population_task``): a ValueError naming the field if not."""
    for k in ("n_items", "n_answered", "n_unparsed", "n_refused"):
        parts = [getattr(r, k) for r in entry.runs]
        total = None if None in parts else sum(p or 0 for p in parts)
        if getattr(entry, k) != total:
            raise ValueError(
                f"'{k}' ({getattr(entry, k)!r}) of a population run is not its sum over runs "
                f"({total!r}); the task-level fields describe every respondent cell (a run "
                "recorded before they did holds the first cell's: run it again)"
            )
    if entry.condition != POPULATION_CONDITION:
        raise ValueError(
            f"'condition' ({entry.condition!r}) of a population run is not "
            f"{POPULATION_CONDITION!r}: the task-level fields describe every respondent cell"
        )


class DistributionInfo(Strict):
    """How one administration mode of the run gives each item's answer distribution
    (``administer.distribution``; Meister et al., 2024)."""

    method: Literal["sampled", "logprob", "verbalized"]
    field: Literal["answer", "option_probs", "stated_shares"] = Field(
        description="the samples.jsonl field the distribution is read from"
    )
    cells: Count = Field(description="cells in this mode: conditions x respondents")
    repeats: Count
    per_item: Count = Field(description="samples pooled per item: cells x repeats")
    temperature: Number
    description: str


class RecordDigest(Strict):
    """A record file as the run wrote it (``records.digest``)."""

    lines: Count
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class ResultsRecord(Strict):
    """The whole ``results.json`` of one ``psym eval`` run."""

    schema_version: Literal[1] = RECORD_SCHEMA_VERSION
    label: Name | None = None
    model: Name
    model_args: dict[str, Any]
    backend: dict[str, Any]
    cache: dict[str, Any] | None
    settings: dict[str, Any]
    seed: Int
    limit: Count | None
    form: Name
    conditions: list[Name]
    design: Name
    repeats: Count
    seeds: list[Int]
    impute: Literal["midpoint"] | None = Field(
        default=None,
        description="interview runs: an interview judge's 'none' scored as the midpoint "
        "(InCharacter's choice, --impute midpoint); absent: left missing",
    )
    distribution: dict[Name, DistributionInfo] | None = Field(
        default=None,
        description="per administration mode: sampled, logprob or verbalized (older runs: none)",
    )
    psymetrics: Name
    plugins: dict[str, dict[str, Any]]
    python: str
    platform: str
    created: str
    tasks: dict[Name, TaskEntry]
    judge: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = Field(
        default=None,
        description="command line, git commit and hashes of the files used (psym eval)",
    )
    merged_from: list[dict[str, Any]] | None = Field(
        default=None, description="the shard run directories a `psym merge` combined"
    )
    rejudged_from: dict[str, Any] | None = Field(
        default=None,
        description="`psym judge`: the interview run re-judged, its judge, and the subject "
        "requests made (none)",
    )
    records: dict[Literal["samples.jsonl", "judge.jsonl"], RecordDigest] | None = Field(
        default=None,
        description="line count and sha256 of the run's samples.jsonl and judge.jsonl as "
        "written (`psym merge` verifies each shard against them)",
    )
