"""``results.json``: run settings, provenance and one entry per task (``ResultsRecord``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from psymetrics_core.base.models import Open, Strict
from psymetrics_core.base.versions import RECORD_SCHEMA_VERSION

__all__ = [
    "RECORD_SCHEMA_VERSION",
    "ScaleEntry",
    "RunSummary",
    "InstrumentInfo",
    "TaskEntry",
    "ResultsRecord",
]


class ScaleEntry(Open):
    """One scale's score with the item counts behind it (free-text tasks may add detail)."""

    score: float | None = Field(description="None when no item of the scale was answered")
    n_items: int
    n_answered: int
    method: str
    z: float | None = None
    norm: dict[str, Any] | None = None


class RunSummary(Strict):
    """One (condition, repeat) administration of a task, as kept in ``tasks.<task>.runs``."""

    condition: str
    facets: dict[str, str] = Field(default_factory=dict)
    repeat: int
    seed: int
    form: str
    n_items: int | None
    n_answered: int | None
    n_unparsed: int | None = None
    n_refused: int | None = None
    parse_rate: float | None = None
    indicators: dict[str, dict[str, Any]] | None = Field(
        default=None, description="validity indicators of this administration's answers"
    )
    scales: dict[str, dict[str, Any]]


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


class TaskEntry(Open):
    """A task's results: the first administration's scores plus every administration in
    ``runs``. Free-text tasks add their own detail fields (counts, odds ratios, ...)."""

    scales: dict[str, ScaleEntry]
    n_items: int
    n_answered: int
    n_unparsed: int
    n_refused: int
    parse_rate: float | None
    norm_group: str | None = None
    indicators: dict[str, dict[str, Any]] | None = Field(
        default=None,
        description="validity indicators of the answer pattern (instruments.indicators)",
    )
    instrument: InstrumentInfo
    prompt_template: str
    condition: str
    facets: dict[str, str] = Field(default_factory=dict)
    repeat: int
    seed: int
    form: str
    kind: str = "questionnaire"
    settings: dict[str, Any] | None = None
    options: dict[str, str] | None = None
    runs: list[RunSummary]

    # Extra fields are allowed on every kind: the ``aggregate`` hook is a plugin extension point
    # and a plugin may add its own detail (e.g. the 16-type test's ``type`` and ``role``); the
    # fields above stay typed and required.


class ResultsRecord(Strict):
    """The whole ``results.json`` of one ``psym eval`` run."""

    schema_version: Literal[1] = RECORD_SCHEMA_VERSION
    label: str | None = None
    model: str
    model_args: dict[str, Any]
    backend: dict[str, Any]
    cache: dict[str, Any] | None
    settings: dict[str, Any]
    seed: int
    limit: int | None
    form: str
    conditions: list[str]
    design: str
    repeats: int
    seeds: list[int]
    psymetrics: str
    plugins: dict[str, dict[str, Any]]
    python: str
    platform: str
    created: str
    tasks: dict[str, TaskEntry]
    judge: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = Field(
        default=None,
        description="command line, git commit and hashes of the files used (psym eval)",
    )
    merged_from: list[dict[str, Any]] | None = Field(
        default=None, description="the shard run directories a `psym merge` combined"
    )
