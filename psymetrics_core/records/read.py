"""The one reader of run directories: ``results.json``, ``samples.jsonl`` and ``judge.jsonl``.

``psym analyze``, ``psym validity``, ``psym report`` and ``psym export scores|samples|judge``
read runs through here, so a truncated, hand-edited or binary file fails the same way
everywhere: one ``PsymError`` line naming the file, the line (JSONL) and the field, and what
was expected (the typed record of ``psymetrics_core.records``; ``psym schema NAME`` prints
it). Reading is bounded by ``base.reading`` (size cap, UTF-8, nesting depth) and parsed by
``strict_json`` (no duplicate keys, no integer beyond 64 bits, finite numbers only); JSONL files
are read a line at a time, so only each line is capped (a long study's samples are not refused).
The record models bound every number and name (``records.fields``) and check counts against
each other; ``scan`` checks ``samples.jsonl`` against ``results.json`` (no duplicated lines,
known tasks, matching counts, scores within their scale's range).
``load_run_data`` reads a whole run directory (with the optional panel files of other
commands) as ``RunData``; its samples are streamed from the file whenever they are iterated.
Every command that reads a run directory (report, export, analyze, validity, merge, the
plugins' analyses) reads it here, so they accept and refuse the same records.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError, model_validator

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.models import Open
from psymetrics_core.base.reading import read_lines
from psymetrics_core.records.fields import Count, Int, Name, Number
from psymetrics_core.records.results import ResultsRecord, check_counts
from psymetrics_core.records.samples import JudgeRecord, SampleRecord
from psymetrics_core.records.scan import check_score_ranges, scan_samples
from psymetrics_core.records.strict_json import load_record, parse_record

__all__ = [
    "read_results",
    "read_results_record",
    "iter_records",
    "iter_lines",
    "field_error",
    "RunData",
    "RecordStream",
    "load_run_data",
    "check_samples",
    "PANEL_FILES",
    "unit_label",
]

M = TypeVar("M", bound=BaseModel)

_JSON_TYPES = {
    "dict": "an object",
    "list": "an array",
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
    "NoneType": "null",
}


def _short(part: str) -> str:
    """A field name as the error shows it: at most 80 characters (a key may be 1 MB long)."""
    return part if len(part) <= 80 else f"{part[:60]}... ({len(part):,} characters)"


def field_error(where: str, exc: ValidationError, schema: str) -> PsymError:
    """One line for the first error of ``exc``: the file (and line), the field and what the
    record expects there (``psym schema <schema>``)."""
    err = exc.errors()[0]
    field = ".".join(_short(str(x)) for x in err["loc"])
    if err["type"] == "missing":
        msg = "missing (required)"
    elif err["type"] == "value_error":
        msg = str(err["msg"]).removeprefix("Value error, ").replace("\n", " ")
    else:
        got = _JSON_TYPES.get(type(err.get("input")).__name__, "a value")
        msg = f"{err['msg']} (got {got})".replace("\n", " ")
    more = len(exc.errors()) - 1
    extra = f"; {more} more error(s)" if more > 0 else ""
    at = f"field '{field}': " if err["loc"] else ""  # a check of the whole record names its own
    return PsymError(f"{where}: {at}{msg}{extra} (see `psym schema {schema}`)")


class _Score(Open):
    score: Number | None = None
    n_items: Count | None = None
    n_answered: Count | None = None
    method: Name | None = None

    @model_validator(mode="after")
    def _counts(self) -> _Score:
        check_counts(self.n_items, n_answered=self.n_answered)
        return self


class _ScoredRun(Open):
    condition: Name = "original"
    facets: dict[Name, Name] = Field(default_factory=dict)
    repeat: Count = 0
    seed: Int | None = None
    scales: dict[Name, _Score] = Field(default_factory=dict)


class _ScoredTask(_ScoredRun):
    runs: list[_ScoredRun] | None = None


class _ScoredResults(Open):
    """The fields of ``results.json`` that scores are read from (``analysis.records``), typed
    where present: what a results file needs for ``psym validity`` (``ResultsRecord`` is all)."""

    label: Name | None = None
    model: Name = "?"
    model_args: dict[str, Any] = Field(default_factory=dict)
    seed: Int | None = None
    tasks: dict[Name, _ScoredTask]


def read_results(path: str | Path, *, schema: bool = False) -> dict[str, Any]:
    """``results.json`` of a run directory (or the file itself) as a dict.

    A one-line ``PsymError`` if it is missing, unreadable, not JSON, holds no ``tasks`` object
    or a field scores are read from has the wrong type (``_ScoredResults``); with
    ``schema=True`` the whole record must match ``ResultsRecord`` (what ``psym eval`` writes),
    so the caller may rely on every typed field.
    """
    return _read_results(path, ResultsRecord if schema else _ScoredResults)[0]


def read_results_record(path: str | Path) -> tuple[dict[str, Any], ResultsRecord]:
    """``results.json`` as its dict and its validated ``ResultsRecord`` (see ``read_results``)."""
    data, record = _read_results(path, ResultsRecord)
    assert isinstance(record, ResultsRecord)
    return data, record


def _read_results(path: str | Path, model: type[M]) -> tuple[dict[str, Any], M]:
    p = Path(path)
    f = p / "results.json" if p.is_dir() or not p.suffix else p
    if not f.is_file():
        raise PsymError(f"{f}: no such file (no results.json: is {f.parent} a `psym eval` run?)")
    data = load_record(f, what="results file")
    if not isinstance(data, dict):
        raise PsymError(f"{f}: expected a JSON object (a psym eval results.json)")
    if not isinstance(data.get("tasks"), dict):
        raise PsymError(f"{f}: not a psym results file (no 'tasks' object)")
    try:
        record = model.model_validate(data)
    except ValidationError as exc:
        raise field_error(str(f), exc, "results") from None
    return data, record


def iter_records(
    path: Path, model: type[M], *, what: str, schema: str
) -> Iterator[tuple[int, dict[str, Any], M]]:
    """Each non-blank line of a JSONL run file as (line number, raw object, validated record).

    A line that is not JSON, not an object or does not match ``model`` is a one-line
    ``PsymError`` naming the file, the line and the field.
    """
    for n, _, row, record in iter_lines(path, model, what=what, schema=schema):
        yield n, row, record


def iter_lines(
    path: Path, model: type[M], *, what: str, schema: str
) -> Iterator[tuple[int, str, dict[str, Any], M]]:
    """``iter_records`` with each line's text: (line number, text, raw object, record)."""
    for n, line in read_lines(path, what=what):
        if not line.strip():
            continue
        row = parse_record(line, path, line=n)
        if not isinstance(row, dict):
            raise PsymError(f"{path}, line {n}: expected a JSON object (one record per line)")
        try:
            record = model.model_validate(row)
        except ValidationError as exc:
            raise field_error(f"{path}, line {n}", exc, schema) from None
        yield n, line, row, record


class RecordStream(Iterable[dict[str, Any]]):
    """The lines of a JSONL run file, read again (and validated) whenever they are iterated:
    a long study's samples are never all in memory. ``len`` is the count of the first pass."""

    def __init__(self, path: Path | None, model: type[BaseModel], schema: str, count: int):
        self.path, self.model, self.schema, self.count = path, model, schema, count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self.path is None:
            return
        for _, row, _ in iter_records(
            self.path, self.model, what=f"{self.schema} file", schema=self.schema
        ):
            yield row

    def records(self) -> Iterator[Any]:
        """The validated records (``model`` instances) instead of the raw objects."""
        if self.path is not None:
            for _, _, rec in iter_records(
                self.path, self.model, what=f"{self.schema} file", schema=self.schema
            ):
                yield rec

    def __len__(self) -> int:
        return self.count

    def __bool__(self) -> bool:
        return self.count > 0


# optional panels: file name in the run directory -> section title
PANEL_FILES = {
    "contamination.json": "Contamination",
    "projective.json": "Projective tests",
}


@dataclass
class RunData:
    """One run directory as the report reads it."""

    label: str
    path: Path
    results: dict[str, Any]
    samples: RecordStream
    judge: RecordStream
    panels: dict[str, Any] = field(default_factory=dict)  # file name -> parsed JSON
    record: ResultsRecord | None = None  # the typed results (None: a panels-only directory)

    @property
    def tasks(self) -> dict[str, dict[str, Any]]:
        """``results.json``'s ``tasks`` mapping."""
        return dict(self.results.get("tasks") or {})

    @property
    def mode(self) -> str:
        """``generate`` or ``logprob``."""
        return str((self.results.get("settings") or {}).get("mode", "generate"))


def _judge(path: Path) -> RecordStream:
    """``judge.jsonl`` validated line by line (none if absent; a directory or other
    non-regular file in its place is an error naming it)."""
    if not path.exists() and not path.is_symlink():
        return RecordStream(None, JudgeRecord, "judge", 0)
    n = sum(1 for _ in iter_records(path, JudgeRecord, what="judge file", schema="judge"))
    return RecordStream(path, JudgeRecord, "judge", n)


def check_samples(run_dir: Path, record: ResultsRecord, *, required: bool = False) -> RecordStream:
    """``run_dir/samples.jsonl`` validated and checked against ``record`` in one streamed pass
    (``records.scan``), scores against their scales' ranges; absent: none, or with
    ``required`` a one-line error."""
    path = run_dir / "samples.jsonl"
    if not path.exists() and not path.is_symlink():  # a folder or FIFO there: the reader says
        if required:
            raise PsymError(
                f"{path}: no such file (run `psym eval --output DIR` to record samples)"
            )
        return RecordStream(None, SampleRecord, "samples", 0)
    lines = (
        (n, rec)
        for n, _, rec in iter_records(path, SampleRecord, what="samples file", schema="samples")
    )
    scan = scan_samples(path, record, lines)
    check_score_ranges(run_dir / "results.json", record, scan)
    return RecordStream(path, SampleRecord, "samples", scan.count)


def load_run_data(
    path: str | Path, label: str | None = None, *, samples_required: bool = False
) -> RunData:
    """One run directory, read by the readers above: a missing or malformed ``results.json``,
    ``samples.jsonl`` or ``judge.jsonl`` (not JSON, not UTF-8, a field of the wrong type,
    missing or out of range, samples that disagree with the results) is a one-line error
    naming the file, line and field. ``samples_required``: a missing samples.jsonl too."""
    p = Path(path)
    res_path = p / "results.json"
    panels = {
        name: load_record(p / name, what="panel file")
        for name in PANEL_FILES
        if (p / name).is_file()
    }
    record: ResultsRecord | None = None
    if res_path.is_file():
        results, record = read_results_record(res_path)
        samples = check_samples(p, record, required=samples_required)
    elif panels and not samples_required:  # e.g. `psym contamination --output DIR`: panels only
        results, samples = {"tasks": {}}, RecordStream(None, SampleRecord, "samples", 0)
    else:
        raise PsymError(
            f"{res_path}: no such file (is {p} a `psym eval --output` directory? "
            f"a directory with only {' or '.join(PANEL_FILES)} is read too)"
        )
    name = label or results.get("label") or p.resolve().name
    return RunData(
        label=str(name),
        path=p,
        results=results,
        samples=samples,
        judge=_judge(p / "judge.jsonl"),
        panels=panels,
        record=record,
    )


def unit_label(results: Mapping[str, Any]) -> str:
    """A run's model: its ``label`` if set, else backend name plus non-default model args."""
    if results.get("label"):
        return str(results["label"])
    args = results.get("model_args") or {}
    extra = ",".join(f"{k}={v}" for k, v in sorted(args.items()))
    return f"{results.get('model', '?')}({extra})" if extra else str(results.get("model", "?"))
