"""The typed records of the projective analysis (``analysis.analyse``): one diagnosis
(``Prediction``), the drift of a cell against the neutral one (``Reliability``), accuracy against
labels (``Validity``), two-judge agreement, the profiles left out, the spread across repeats, and
the whole ``Report``."""

from __future__ import annotations

from dataclasses import dataclass, field

from .drift import DCR, Shift, Stat

__all__ = ["Prediction", "Reliability", "Validity", "Agreement", "Excluded", "Spread", "Report"]


@dataclass(frozen=True)
class Prediction:
    """The diagnoses of one (run directory, task, persona, condition, judge) cell."""

    source: str
    task: str
    persona: str
    condition: str
    judge: str
    repeat: int
    values: dict[str, int | None]
    origin: str = "diagnosis"  # "diagnosis" (dx.* of a projective task) or "questionnaire"
    invalid: str | None = None  # why the profile is left out (below the minimum answered)
    substituted: tuple[str, ...] = ()  # dimensions filled with AUTHORS_DEFAULTS


@dataclass(frozen=True)
class Reliability:
    """One perturbed condition against neutral for a (judge, task, target)."""

    judge: str
    task: str
    target: str
    condition: str
    n_targets: int
    kappa: Stat
    dcr: DCR
    shift: Shift
    repeat: int = 0


@dataclass(frozen=True)
class Validity:
    """Accuracy (or MBTI Hamming distance) of one condition against ground truth."""

    judge: str
    task: str
    target: str
    condition: str
    metric: str
    value: Stat
    majority: Stat
    repeat: int = 0


@dataclass(frozen=True)
class Agreement:
    """Agreement of two judges on the same cells of a task and target."""

    task: str
    target: str
    condition: str
    judges: tuple[str, str]
    exact: Stat
    kappa: Stat
    repeat: int = 0


@dataclass(frozen=True)
class Excluded:
    """A questionnaire profile left out of every statistic, with the reason."""

    source: str
    task: str
    persona: str
    condition: str
    repeat: int
    reason: str


@dataclass(frozen=True)
class Spread:
    """One statistic across the repeats of a cell: mean, sample SD (ddof 1), min and max over
    the repeats where it is defined; None with a reason where it cannot be computed."""

    judge: str
    task: str
    target: str
    condition: str
    metric: str
    n_repeats: int
    n_defined: int
    mean: float | None
    sd: float | None
    low: float | None
    high: float | None
    reason: str | None = None


@dataclass
class Report:
    """Everything ``analyse`` computes."""

    reliability: list[Reliability] = field(default_factory=list)
    validity: list[Validity] = field(default_factory=list)
    agreement: list[Agreement] = field(default_factory=list)
    n_predictions: int = 0
    notes: list[str] = field(default_factory=list)
    unparsed: str = "missing"
    n_substituted: int = 0
    repeats: list[int] = field(default_factory=list)
    excluded: list[Excluded] = field(default_factory=list)
    spread: list[Spread] = field(default_factory=list)
