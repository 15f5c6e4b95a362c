"""The one reader of run directories: ``results.json``, ``samples.jsonl`` and ``judge.jsonl``.

``psym analyze``, ``psym validity``, ``psym report`` and ``psym export scores|samples|judge``
read runs through here, so a truncated, hand-edited or binary file fails the same way
everywhere: one ``PsymError`` line naming the file, the line (JSONL) and the field, and what
was expected (the typed record of ``psymetrics_core.records``; ``psym schema NAME`` prints
it). Reading is bounded by ``safe_io`` (size cap, UTF-8, nesting depth, no NaN); JSONL files are
read a line at a time, so only each line is capped (a long study's samples are not refused).
``load_run_data`` reads a whole run directory (with the optional panel files of other
commands) as ``RunData``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.models import Open
from psymetrics_core.base.reading import load_json, parse_json, read_lines
from psymetrics_core.records.results import ResultsRecord
from psymetrics_core.records.samples import JudgeRecord, SampleRecord

__all__ = ["read_results", "iter_records", "field_error", "RunData", "load_run_data", "PANEL_FILES"]

M = TypeVar("M", bound=BaseModel)

_JSON_TYPES = {
    "dict": "an object", "list": "an array", "str": "a string", "int": "an integer",
    "float": "a number", "bool": "a boolean", "NoneType": "null",
}  # fmt: skip


def field_error(where: str, exc: ValidationError, schema: str) -> PsymError:
    """One line for the first error of ``exc``: the file (and line), the field and what the
    record expects there (``psym schema <schema>``)."""
    err = exc.errors()[0]
    field = ".".join(str(x) for x in err["loc"]) or "(the record)"
    if err["type"] == "missing":
        msg = "missing (required)"
    else:
        got = _JSON_TYPES.get(type(err.get("input")).__name__, "a value")
        msg = f"{err['msg']} (got {got})".replace("\n", " ")
    more = len(exc.errors()) - 1
    extra = f"; {more} more error(s)" if more > 0 else ""
    return PsymError(f"{where}: field '{field}': {msg}{extra} (see `psym schema {schema}`)")


class _Score(Open):
    score: float | None = None
    n_items: int | None = None
    n_answered: int | None = None
    method: str | None = None


class _ScoredRun(Open):
    condition: str = "original"
    facets: dict[str, str] = Field(default_factory=dict)
    repeat: int = 0
    seed: int | None = None
    scales: dict[str, _Score] = Field(default_factory=dict)


class _ScoredTask(_ScoredRun):
    runs: list[_ScoredRun] | None = None


class _ScoredResults(Open):
    """The fields of ``results.json`` that scores are read from (``analysis.records``), typed
    where present: what a results file needs for ``psym validity`` (``ResultsRecord`` is all)."""

    label: str | None = None
    model: str = "?"
    model_args: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    tasks: dict[str, _ScoredTask]


def read_results(path: str | Path, *, schema: bool = False) -> dict[str, Any]:
    """``results.json`` of a run directory (or the file itself) as a dict.

    A one-line ``PsymError`` if it is missing, unreadable, not JSON, holds no ``tasks`` object
    or a field scores are read from has the wrong type (``_ScoredResults``); with
    ``schema=True`` the whole record must match ``ResultsRecord`` (what ``psym eval`` writes),
    so the caller may rely on every typed field.
    """
    p = Path(path)
    f = p / "results.json" if p.is_dir() or not p.suffix else p
    if not f.is_file():
        raise PsymError(f"{f}: no such file (no results.json: is {f.parent} a `psym eval` run?)")
    data = load_json(f, what="results file")
    if not isinstance(data, dict):
        raise PsymError(f"{f}: expected a JSON object (a psym eval results.json)")
    if not isinstance(data.get("tasks"), dict):
        raise PsymError(f"{f}: not a psym results file (no 'tasks' object)")

    try:
        (ResultsRecord if schema else _ScoredResults).model_validate(data)
    except ValidationError as exc:
        raise field_error(str(f), exc, "results") from None
    return data


def iter_records(
    path: Path, model: type[M], *, what: str, schema: str
) -> Iterator[tuple[int, dict[str, Any], M]]:
    """Each non-blank line of a JSONL run file as (line number, raw object, validated record).

    A line that is not JSON, not an object or does not match ``model`` is a one-line
    ``PsymError`` naming the file, the line and the field.
    """
    for n, line in read_lines(path, what=what):
        if not line.strip():
            continue
        row = parse_json(line, path, line=n)
        if not isinstance(row, dict):
            raise PsymError(f"{path}, line {n}: expected a JSON object (one record per line)")
        try:
            record = model.model_validate(row)
        except ValidationError as exc:
            raise field_error(f"{path}, line {n}", exc, schema) from None
        yield n, row, record


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
    samples: list[dict[str, Any]]
    judge: list[dict[str, Any]] = field(default_factory=list)
    panels: dict[str, Any] = field(default_factory=dict)  # file name -> parsed JSON

    @property
    def tasks(self) -> dict[str, dict[str, Any]]:
        """``results.json``'s ``tasks`` mapping."""
        return dict(self.results.get("tasks") or {})

    @property
    def mode(self) -> str:
        """``generate`` or ``logprob``."""
        return str((self.results.get("settings") or {}).get("mode", "generate"))


def _jsonl(path: Path, model: type[BaseModel], schema: str) -> list[dict[str, Any]]:
    """The objects of a JSONL run file, each validated against its record (none if absent;
    a directory or other non-regular file in its place is an error naming it)."""
    if not path.exists() and not path.is_symlink():
        return []
    return [row for _, row, _ in iter_records(path, model, what=f"{schema} file", schema=schema)]


def load_run_data(path: str | Path, label: str | None = None) -> RunData:
    """One run directory, read by the readers above: a missing
    or malformed ``results.json``, ``samples.jsonl`` or ``judge.jsonl`` (not JSON, not UTF-8, a
    field of the wrong type or missing) is a one-line error naming the file, line and field."""
    p = Path(path)
    res_path = p / "results.json"
    panels = {
        name: load_json(p / name, what="panel file") for name in PANEL_FILES if (p / name).is_file()
    }
    if res_path.is_file():
        results = read_results(res_path, schema=True)
    elif panels:  # e.g. a `psym contamination --output DIR` directory: panels only
        results = {"tasks": {}}
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
        samples=_jsonl(p / "samples.jsonl", SampleRecord, "samples"),
        judge=_jsonl(p / "judge.jsonl", JudgeRecord, "judge"),
        panels=panels,
    )
