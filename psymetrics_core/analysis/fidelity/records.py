"""Typed records of ``psym fidelity``: one side's answers as read, the aligned distributions and
the results (per item, per scale, overall, subgroups, the human ceiling, Huang et al.'s k̂)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "NONSUB",
    "OptionSet",
    "SideAnswers",
    "ItemDistribution",
    "Aligned",
    "Estimate",
    "ItemFidelity",
    "ScaleFidelity",
    "Ceiling",
    "GroupFidelity",
    "KHat",
    "SideInfo",
    "FidelityResult",
]

# the non-substantive answers, kept apart from the options (in this order in every array)
NONSUB = ("refused", "dont_know", "unparsed")


@dataclass(frozen=True)
class OptionSet:
    """One item's substantive options: their values (as written in the data), ordinal positions
    and labels, sorted by position."""

    values: tuple[str, ...]
    positions: tuple[float, ...]
    labels: tuple[str, ...] = ()

    @property
    def span(self) -> float:
        """max - min of the positions (OpinionQA's W1 normaliser)."""
        return max(self.positions) - min(self.positions) if self.positions else 0.0


@dataclass
class SideAnswers:
    """One side (MODEL or HUMAN) as read, before the two are aligned.

    ``frame``: one row per contribution: ``unit`` (a respondent, or a run's administration),
    ``item``, ``key`` (an option value as written, or one of ``NONSUB``), ``mass`` (weight x
    share: 1 for a sampled answer, the probability of a logprob option, a stated share) and
    ``line`` (the file line, 0 when none). ``cluster``: unit -> the resampling cluster (the
    persona of a population run). ``labels``: unit -> group labels (strings)."""

    path: Path
    kind: str  # "run", "answers" or "distribution table"
    method: str  # "sampled", "logprob", "verbalized", "answers" or "table"
    frame: pd.DataFrame
    cluster: pd.Series
    labels: pd.DataFrame
    options: dict[str, OptionSet] = field(default_factory=dict)  # declared by the source
    scales: dict[str, tuple[str, ...]] = field(default_factory=dict)  # item -> its scales
    task: str | None = None
    resampled: bool = True  # False: a distribution table (fixed, not resampled)
    outside_mass: float | None = None  # logprob: mean 1 - option_mass
    rows: int = 0  # lines (records) read


@dataclass(frozen=True)
class ItemDistribution:
    """One item's distribution on one side: substantive shares over ``options`` (renormalised)
    and the non-substantive shares of all answers (``NONSUB`` order); ``n`` units answered."""

    item: str
    options: OptionSet
    shares: tuple[float, ...]
    nonsub: tuple[float, ...]
    n: int


@dataclass
class Aligned:
    """Both sides over the compared items: per-cluster masses ``(clusters, items, K + 3)``
    (K = the most options of any item, padded; the last 3 slots are ``NONSUB``), the items'
    sorted positions (padded with the last one) and which slots are options."""

    items: list[str]
    options: list[OptionSet]
    positions: np.ndarray  # (items, K)
    valid: np.ndarray  # (items, K) bool
    model: np.ndarray  # (model clusters, items, K + 3)
    human: np.ndarray  # (human clusters, items, K + 3)
    model_units: pd.Index  # cluster ids, in the arrays' order
    human_units: pd.Index
    model_labels: pd.DataFrame  # cluster -> labels
    human_labels: pd.DataFrame
    scales: dict[str, list[str]]  # scale -> its compared items
    model_n: np.ndarray  # (items,) clusters that answered on the model side
    human_n: np.ndarray
    not_compared: dict[str, str] = field(default_factory=dict)  # item -> why


@dataclass(frozen=True)
class Estimate:
    """A figure with its bootstrap interval; ``value`` None with ``reason`` when undefined."""

    value: float | None
    low: float | None = None
    high: float | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ItemFidelity:
    """One item: the metrics, the two distributions and their non-substantive shares."""

    item: str
    scales: tuple[str, ...]
    n_model: int
    n_human: int
    w1: Estimate  # OpinionQA's normalised W1 (0 = same, 1 = opposite ends)
    tv: Estimate
    simbench: Estimate  # 100 * (1 - TV / norm), norm at the data-set level
    jsd: Estimate
    ks: Estimate
    model: ItemDistribution
    human: ItemDistribution


@dataclass(frozen=True)
class ScaleFidelity:
    """A scale's (or all items': ``scale`` "overall") means over its compared items."""

    scale: str
    items: int  # items with a defined W1
    representativeness: Estimate  # 1 - mean W1 (Santurkar et al., 2023)
    w1: Estimate
    tv: Estimate
    simbench: Estimate
    jsd: Estimate
    ks: Estimate


@dataclass(frozen=True)
class Ceiling:
    """The same overall metrics between a random part of ``n_sample`` human respondents and the
    other ``n_rest`` (``splits`` random splits: the mean and the 2.5-97.5 percentiles): two
    halves (the human ceiling: what a second human sample scores), or as many humans as the
    model side has clusters (what a human sample of the model's size scores)."""

    splits: int
    n_sample: int
    n_rest: int
    representativeness: Estimate
    simbench: Estimate
    tv: Estimate
    jsd: Estimate
    ks: Estimate


@dataclass(frozen=True)
class GroupFidelity:
    """One value of a human group column: the model's fidelity to that group, the steered
    model's (personas labelled with the same value) and the human between-group baseline
    (the other groups' humans against this group)."""

    column: str
    value: str
    n_human: int
    n_model: int  # personas carrying this value (0: none)
    model_all: Estimate  # representativeness of the whole model to this group
    model_steered: Estimate  # of the personas labelled with this value
    steer_gain: Estimate  # steered - all
    human_others: Estimate  # of the other groups' humans
    simbench_all: Estimate
    simbench_steered: Estimate


@dataclass(frozen=True)
class KHat:
    """Huang, Wu & Wang's (2025) effective human sample size: the largest k whose synthetic
    intervals (from the model's first k answers) still cover the human intervals on all but a
    share alpha * gamma of the items."""

    value: int | None
    k_min: int
    alpha: float
    gamma: float
    c: float
    k_max: int
    items: int
    miscoverage: tuple[float, ...] = ()  # G(k) for k = 1..k_max
    reason: str | None = None


@dataclass(frozen=True)
class SideInfo:
    """What was read from one side."""

    path: str
    kind: str
    method: str
    units: int  # respondents (or administrations) read
    clusters: int  # resampling clusters (personas, respondents)
    rows: int
    resampled: bool
    outside_mass: float | None = None


@dataclass
class FidelityResult:
    """Everything ``psym fidelity`` (and ``psym analyze RUN --human``) shows."""

    model: SideInfo
    human: SideInfo
    task: str | None
    n_boot: int
    seed: int
    items: list[ItemFidelity]
    scales: list[ScaleFidelity]
    overall: ScaleFidelity
    norm: Estimate  # SimBench's normaliser: mean TV(human, uniform) over norm_items
    norm_items: list[str]
    ceiling: Ceiling | None
    same_n: Ceiling | None  # n_sample = the model's clusters
    groups: list[GroupFidelity]
    khat: KHat | None
    not_compared: dict[str, str]
    notes: list[str] = field(default_factory=list)
