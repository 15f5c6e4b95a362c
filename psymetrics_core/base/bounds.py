"""Upper and lower bounds of every number a user gives psymetrics, in one table.

Each command-line option, task option (``--task-arg``), probe option and backend argument that
takes a number names its ``Bound`` here, so the limits are declared once: the CLI builds its
``click`` types from them (``psymetrics_core.cli.bounded``; ``--help`` shows "1-1000") and the
library checks the same limits before any work starts (``Bound.check``). An out-of-range value
is one line naming the option, the value and the bound. The table is documented in
``docs/reference/bounds.md``; a test keeps the two in step.

The limits are generous for research (a thousand repeats, ten thousand permutations, the
housing study's five lists a thousand times over) while refusing values that would run for
hours or exhaust memory before the first answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fnmatch import fnmatchcase

from psymetrics_core.base.errors import PsymError

__all__ = ["Bound", "BOUNDS", "bound", "task_option_bound", "SEED_MAX", "TOKENS_MAX"]

SEED_MAX = 2**31 - 1  # seeds SEED .. SEED + repeats - 1 stay below 2**32 (numpy's limit)
TOKENS_MAX = 131_072  # generation length: the longest outputs current models produce


@dataclass(frozen=True)
class Bound:
    """The closed range [lo, hi] of one numeric option; ``integer`` False for real numbers."""

    name: str  # as the user writes it: --repeats, n_lists, --model-args timeout
    lo: float
    hi: float
    integer: bool = True
    why: str = ""

    @property
    def span(self) -> str:
        """The range as ``--help`` and the docs show it, e.g. ``1-1000``."""
        return f"{_num(self.lo)}-{_num(self.hi)}"

    def message(self, value: object, name: str | None = None) -> str:
        """The one-line refusal of ``value``."""
        kind = "an integer" if self.integer else "a number"
        text = str(value).strip()
        shown = text[:40] + ("..." if len(text) > 40 else "")
        return f"{name or self.name} must be {kind} in {self.span}, got {shown!r}"

    def holds(self, value: object) -> bool:
        """Whether ``value`` is a (finite) number of the right kind within the bound."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.integer and not isinstance(value, int):
            return False
        if isinstance(value, int):  # exact: isfinite() overflows on an int beyond a float
            return self.lo <= value <= self.hi
        return math.isfinite(value) and self.lo <= value <= self.hi

    def check(self, value: object, name: str | None = None) -> None:
        """Raise a ``PsymError`` unless ``value`` is within the bound (see ``holds``)."""
        if not self.holds(value):
            raise PsymError(self.message(value, name))

    def parse(self, raw: str, name: str | None = None) -> int | float:
        """``raw`` text as a number within the bound (one-line error otherwise)."""
        text = raw.strip()
        try:
            value: int | float = int(text) if self.integer else float(text)
        except ValueError:
            raise PsymError(self.message(raw, name)) from None
        self.check(value, name)
        return value


def _num(x: float) -> str:
    if float(x).is_integer() and abs(x) >= 10_000:
        return f"{int(x):,}"
    return f"{int(x)}" if float(x).is_integer() else f"{x:g}"


def _b(name: str, lo: float, hi: float, why: str, integer: bool = True) -> Bound:
    return Bound(name, lo, hi, integer, why)


BOUNDS: dict[str, Bound] = {
    b.name: b
    for b in (
        _b("--repeats", 1, 1000, "seeded repetitions per condition"),
        _b("--seed", 0, SEED_MAX, "run seed (repeats add 0 .. repeats - 1)"),
        _b("--limit", 1, 1_000_000, "items per task"),
        _b("--max-new-tokens", 1, TOKENS_MAX, "generation length"),
        _b("--judge-max-new-tokens", 1, TOKENS_MAX, "judge reply length"),
        _b("--judge-batch", 1, 50, "interview: items per option-conversion request of the judge"),
        _b("--temperature", 0, 100, "sampling temperature (0 = greedy)", integer=False),
        _b("--concurrency", 1, 1024, "requests in flight at once"),
        _b("--shards", 1, 1000, "shards of a plan under an executor"),
        _b("--shard N", 1, 1000, "shards of a plan: the N of --shard i/N (and of shard.json)"),
        _b("--fence-k", 0, 100, "Tukey fence k of psym analyze", integer=False),
        _b("--permutations", 1, 10_000, "order-test permutations (one request each)"),
        _b("contamination --limit", 2, 1_000_000, "items per task of psym contamination"),
        _b("--n-boot", 1, 100_000, "bootstrap resamples of psym projective-analyze"),
        _b("--option bootstrap", 1, 20_000, "bootstrap resamples of the contamination index"),
        _b("--option max_new_tokens_*", 1, TOKENS_MAX, "contamination probe generation lengths"),
        _b("housing.n_lists", 1, 1000, "housing: lists sampled per city (the paper: 5)"),
        _b("housing.list_size", 1, 1000, "housing: neighbourhoods per list (the paper: 20)"),
        _b("housing.sample_seed", 0, SEED_MAX, "housing: seed of the stratified sampling"),
        _b("*.stimulus_seed", 0, SEED_MAX, "projective: seed of the stimulus sample and inkblots"),
        _b("*.*_tokens", 1, TOKENS_MAX, "projective: generation length per stage"),
        _b("refletter.min_count", 0, 1_000_000, "refletter: minimum letter count"),
        _b("moral-advice.per_foundation", 1, 100_000, "moral-advice: dilemmas per foundation"),
        _b("--option seed", 0, SEED_MAX, "contamination: seed of permutations and bootstrap"),
        _b("--model-args concurrency", 1, 1024, "openai: requests in flight at once"),
        _b("--model-args timeout", 0.001, 3600, "openai: seconds per request", integer=False),
        _b("--model-args deadline", 0.001, 86_400, "openai: seconds with retries", integer=False),
        _b("--model-args max_retries", 0, 100, "openai: retries of one request"),
        _b("--model-args backoff", 0, 60, "openai: first retry delay in seconds", integer=False),
        _b("--model-args top_logprobs", 1, 100, "openai: alternatives per token"),
        _b("--model-args max_response_bytes", 1024, 1024**3, "openai: bytes of one reply"),
        _b("--model-args batch_size", 1, 4096, "hf: prompts per forward pass"),
        _b("--model-args threads", 1, 1024, "hf: CPU threads"),
    )
}


def bound(name: str) -> Bound:
    """The bound declared for ``name``, exactly or by a ``*`` pattern of the table (e.g.
    ``--option max_new_tokens_verbatim``); a ``KeyError`` is a programming error."""
    if name in BOUNDS:
        return BOUNDS[name]
    for pattern, b in BOUNDS.items():
        if "*" in pattern and fnmatchcase(name, pattern):
            return b
    raise KeyError(name)


TASK_OPTION_MAX = 1_000_000  # an integer task option that the table does not name


def task_option_bound(task: str, key: str, minimum: int = 1) -> Bound:
    """The bound of integer task option ``key`` of ``task`` (``--task-arg TASK.KEY=N``): the
    table's ``TASK.KEY`` entry (``*`` matches any task or part of a key), else
    ``minimum``..``TASK_OPTION_MAX``."""
    for name, b in BOUNDS.items():
        if "." in name and not name.startswith("-") and fnmatchcase(f"{task}.{key}", name):
            return b
    return Bound(f"{task}.{key}", minimum, TASK_OPTION_MAX, True, "a task option")
