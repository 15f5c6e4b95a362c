"""``samples.jsonl`` checked against its ``results.json``, streamed a line at a time.

``scan_samples`` reads every line once (each validated as a ``SampleRecord``) and keeps only
counters and a hash per line, so memory stays bounded on a long study (at most
``MAX_SAMPLE_LINES`` lines). It refuses, in one line naming the file, line and field:

- a line whose (task, item, condition, repeat) an earlier line already holds (it would be
  counted as a second administration);
- a task ``results.json`` does not list, or an administration (condition, repeat) it has not;
- per administration, a number of lines other than its ``n_items`` or, for questionnaires, a
  number of parsed answers other than its ``n_answered`` (an empty file beside a results file
  that claims answers included);
- a questionnaire score outside the range its items allow: a mean within the lowest and
  highest keyed value of the scale's items (their response codes or value maps; MRAT-centred
  scales within +-(highest - lowest)), a sum within n_items times those, a percentage within
  0..100.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from psymetrics_core.base.errors import PsymError
from psymetrics_core.records.results import ResultsRecord
from psymetrics_core.records.samples import SampleRecord

__all__ = ["MAX_SAMPLE_LINES", "SampleScan", "scan_samples"]

MAX_SAMPLE_LINES = 1_000_000

_Admin = tuple[str, str, int]  # task, condition, repeat


@dataclass
class SampleScan:
    """What one pass over ``samples.jsonl`` found."""

    lines: int = 0
    per_admin: Counter[_Admin] = field(default_factory=Counter)
    answered: Counter[_Admin] = field(default_factory=Counter)
    ranges: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    centred: set[tuple[str, str]] = field(default_factory=set)

    @property
    def count(self) -> int:
        """The number of samples read."""
        return sum(self.per_admin.values())

    def widen(self, key: tuple[str, str], values: list[float]) -> None:
        """Extend the keyed-value range of (task, scale) ``key`` by ``values``."""
        if not values:
            return
        lo, hi = self.ranges.get(key, (min(values), max(values)))
        self.ranges[key] = (min(lo, *values), max(hi, *values))


def _item_values(s: SampleRecord) -> list[float]:
    meta = s.item_meta
    if meta.rescale:
        return [v for _, v in meta.rescale]
    return [float(x) for x in (meta.min, meta.max) if x is not None]


def _note(scan: SampleScan, s: SampleRecord) -> None:
    admin = (s.task, s.condition, s.repeat)
    scan.per_admin[admin] += 1
    scan.answered[admin] += (
        s.answer is not None
        or s.stated_shares is not None  # verbalized
        or (s.interview is not None and s.parse_status == "ok")  # expert-rated: scale scored
    )
    if s.kind != "questionnaire" or not s.item_meta.scored:
        return
    values = _item_values(s)
    for scale in s.item_meta.scales:
        scan.widen((s.task, scale), values)
    for scale, v in (s.keyed or {}).items():
        scan.widen((s.task, scale), [v])
    scan.centred.update((s.task, c) for c in s.item_meta.centred)


def scan_samples(
    path: Path, results: ResultsRecord, lines: Iterator[tuple[int, SampleRecord]]
) -> SampleScan:
    """Check the validated ``lines`` of ``path`` against ``results`` (module docstring)."""
    known = {
        (task, run.condition, run.repeat)
        for task, entry in results.tasks.items()
        for run in entry.runs
    }
    seen: set[int] = set()
    scan = SampleScan()
    for n, s in lines:
        if n > MAX_SAMPLE_LINES:
            raise PsymError(
                f"{path}, line {n}: more than {MAX_SAMPLE_LINES:,} samples in one run directory "
                "(split the study into shards: `psym plan --shards`)"
            )
        if s.task not in results.tasks:
            raise PsymError(
                f"{path}, line {n}: field 'task': {s.task[:80]!r} is not a task of the "
                f"results.json beside it ({', '.join(sorted(results.tasks))[:200] or 'none'})"
            )
        if (s.task, s.condition, s.repeat) not in known:
            raise PsymError(
                f"{path}, line {n}: field 'repeat': task {s.task} has no administration "
                f"(condition {s.condition[:80]!r}, repeat {s.repeat}) in results.json"
            )
        key = hash((s.task, s.item, s.condition, s.repeat))
        if key in seen:
            raise PsymError(
                f"{path}, line {n}: field 'item': a second line for item {s.item[:80]!r} of task "
                f"{s.task} (condition {s.condition[:80]!r}, repeat {s.repeat}); each "
                "administered item is recorded once"
            )
        seen.add(key)
        scan.lines = n
        _note(scan, s)
    check_counts(path, results, scan)
    return scan


def check_counts(path: Path, results: ResultsRecord, scan: SampleScan) -> None:
    """Lines and parsed answers per administration equal what ``results.json`` claims."""
    for task, entry in results.tasks.items():
        for i, run in enumerate(entry.runs):
            admin = (task, run.condition, run.repeat)
            got, claim = scan.per_admin[admin], run.n_items
            what = "an empty samples.jsonl" if scan.count == 0 else f"{got} sample line(s)"
            if claim is not None and got != claim:
                raise PsymError(
                    f"{path}: {what} for task {task} (condition {run.condition[:80]!r}, repeat "
                    f"{run.repeat}), but results.json field 'tasks.{task}.runs.{i}.n_items' "
                    f"claims {claim}"
                )
            answered = scan.answered[admin]
            if entry.kind == "questionnaire" and run.n_answered not in (None, answered):
                raise PsymError(
                    f"{path}: {answered} parsed answer(s) for task {task} (condition "
                    f"{run.condition[:80]!r}, repeat {run.repeat}), but results.json field "
                    f"'tasks.{task}.runs.{i}.n_answered' claims {run.n_answered}"
                )


def check_score_ranges(results_path: Path, results: ResultsRecord, scan: SampleScan) -> None:
    """Each questionnaire score within the range its items allow (module docstring)."""
    for task, entry in results.tasks.items():
        if entry.kind != "questionnaire":
            continue
        places = [(f"tasks.{task}.scales", entry.scales)] + [
            (f"tasks.{task}.runs.{i}.scales", run.scales) for i, run in enumerate(entry.runs)
        ]
        for where, scales in places:
            for name, sc in scales.items():
                bounds = _bounds(scan, task, name, sc.method, sc.n_items)
                if sc.score is None or bounds is None:
                    continue
                lo, hi = bounds
                slack = 1e-9 * (1.0 + abs(lo) + abs(hi))
                if not lo - slack <= sc.score <= hi + slack:
                    raise PsymError(
                        f"{results_path}: field '{where}.{name}.score': {sc.score:g} is outside "
                        f"the scale's range {lo:g}..{hi:g} ({sc.method} of its items' values "
                        "in samples.jsonl)"
                    )


def _bounds(
    scan: SampleScan, task: str, scale: str, method: str | None, n_items: int | None
) -> tuple[float, float] | None:
    if method is not None and method.startswith("percent"):
        return 0.0, 100.0
    rng = scan.ranges.get((task, scale))
    if rng is None or method not in ("mean", "sum"):
        return None
    lo, hi = rng
    if (task, scale) in scan.centred:
        lo, hi = lo - hi, hi - lo
    if method == "sum":
        n = n_items or 0
        return n * min(lo, 0.0), n * max(hi, 0.0)
    return lo, hi
