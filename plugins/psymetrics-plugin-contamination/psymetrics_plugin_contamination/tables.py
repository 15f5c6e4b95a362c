"""``psym contamination tables``: several runs laid out as Han et al.'s (2025) tables.

The paper compares models in three layouts (the notes' §5.6 and §7):

- Tables 3-6, one per inventory (BFI-44, MFQ, PVQ-40, SD-3): a row per model, a column per
  metric - verbatim AED (lower = more contaminated), key-information success rate (higher),
  item-dimension macro-F1 (higher), option-score MAE (lower), target-score MAE (lower) - rounded
  to 2 decimals;
- Table 1: per model, the unweighted mean over the inventories, with an "Average" row (the
  unweighted mean of the model rows), 2 decimals;
- Table 2: per inventory, the unweighted mean over the models, 3 decimals.

Each run is one ``psym contamination --output DIR`` directory, read by the one run-directory
reader (``psymetrics_core.records.read.load_run_data``: ``results.json`` checked against its
schema, ``samples.jsonl``, and ``contamination.json`` as a panel). The values are the core
record's scores (``results.json``, task ``<instrument>.<probe>``), which must agree with
``contamination.json``. A mean over a missing or undefined value is undefined (null with the
reason), never the mean of the rest. Every run must probe the same instruments: Table 1 averages
over them.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from psymetrics_core.api import PsymError, atomic_write

from .summary import METRIC

__all__ = [
    "PAPER_COLUMNS",
    "Cell",
    "Table",
    "RunValues",
    "load_runs",
    "paper_tables",
    "to_markdown",
    "to_csv",
    "write_output",
    "render",
    "output_format",
    "run_inputs",
]

# the paper's columns: probe, header (with its direction arrow)
PAPER_COLUMNS = (
    ("verbatim", "Verbatim AED ↓"),
    ("keyword", "Key-info success rate ↑"),
    ("item-dimension", "Item-dimension F1 ↑"),
    ("option-score", "Option-score MAE ↓"),
    ("target-score", "Target-score MAE ↓"),
)
PAPER_ORDER = ("bfi", "mfq", "pvq40", "sd3")  # Tables 3, 4, 5, 6
_RATES = {"keyword", "item-dimension"}  # in [0, 1]; the others are >= 0
SCHEMA = "psymetrics-contamination/1"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Backend(_Open):
    model: str | None = None
    pretrained: str | None = None


class _Probe(_Open):
    value: float | None = None


class _Task(_Open):
    inventory_name: str
    probes: dict[str, _Probe]


class _Panel(_Open):
    """The fields of ``contamination.json`` the tables read."""

    schema_: str = Field(alias="schema")
    model: str
    backend: _Backend
    tasks: dict[str, _Task]
    options: dict[str, Any]


@dataclass(frozen=True)
class Cell:
    """One table value; ``value`` None with the ``reason`` it is undefined."""

    value: float | None
    reason: str | None = None


@dataclass(frozen=True)
class RunValues:
    """One run: its row label, directory, instruments (id -> name) and metric values."""

    label: str
    path: Path
    names: dict[str, str]
    values: dict[tuple[str, str], Cell]  # (instrument, probe) -> cell
    options: dict[str, Any]


@dataclass(frozen=True)
class Table:
    """One of the paper's tables: a title, the first column's name, rows of cells."""

    title: str
    first: str
    rows: list[tuple[str, list[Cell]]]
    digits: int
    per_instrument: bool = False  # its undefined cells are explained in the notes


def _panel(path: Path, raw: Any) -> _Panel:
    where = path / "contamination.json"
    try:
        panel = _Panel.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or "(the record)"
        raise PsymError(f"{where}: field '{field}': {err['msg']}".replace("\n", " ")) from None
    if panel.schema_ != SCHEMA:
        raise PsymError(f"{where}: field 'schema': expected {SCHEMA!r}, got {panel.schema_!r}")
    if not panel.tasks:
        raise PsymError(f"{where}: field 'tasks': no instrument was probed")
    return panel


def _score(path: Path, results: dict[str, Any], task: str, probe: str) -> Cell | None:
    """The probe's score in ``results.json`` (None when the run did not run it)."""
    entry = results["tasks"].get(f"{task}.{probe}")
    if entry is None:
        return None
    metric = METRIC[probe][0]
    scale = entry["scales"].get(metric)
    where = f"{path / 'results.json'}: field 'tasks.{task}.{probe}.scales.{metric}"
    if scale is None:
        raise PsymError(f"{where}': missing (a contamination run records its metric there)")
    value = scale["score"]
    if value is None:
        return Cell(None, str(scale.get("reason") or "undefined"))
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PsymError(f"{where}.score': expected a finite number or null, got {value!r}"[:300])
    top = 1.0 if probe in _RATES else math.inf
    if not 0 <= value <= top:
        span = "[0, 1]" if probe in _RATES else ">= 0"
        raise PsymError(f"{where}.score': expected a value in {span}, got {value!r}")
    return Cell(float(value))


def _run_values(path: Path, label: str | None) -> RunValues:
    from psymetrics_core.api import load_run_data

    data = load_run_data(path)
    if "contamination.json" not in data.panels:
        raise PsymError(
            f"{path}: not a `psym contamination` run (no contamination.json; "
            f"give the --output directories of psym contamination)"
        )
    panel = _panel(path, data.panels["contamination.json"])
    if not (path / "results.json").is_file():
        raise PsymError(
            f"{path / 'results.json'}: no such file (psym contamination writes it beside "
            f"contamination.json; the tables read the scores from it)"
        )
    values: dict[tuple[str, str], Cell] = {}
    for task, entry in panel.tasks.items():
        for probe, _ in PAPER_COLUMNS:
            cell = _score(path, data.results, task, probe)
            if cell is None:
                values[task, probe] = Cell(None, "not run")
                continue
            own = entry.probes[probe].value if probe in entry.probes else None
            if own != cell.value:
                raise PsymError(
                    f"{path}: results.json and contamination.json disagree on {task} {probe} "
                    f"({cell.value!r} vs {own!r}): was a file edited by hand?"
                )
            values[task, probe] = cell
    name = label or panel.backend.model or panel.backend.pretrained or panel.model
    names = {t: e.inventory_name for t, e in panel.tasks.items()}
    return RunValues(str(name), path, names, values, panel.options)


def load_runs(paths: Sequence[str | Path], labels: Sequence[str] = ()) -> list[RunValues]:
    """The runs at ``paths`` (``labels``: a row label per run, in order; default: the model
    the run recorded). One ``PsymError`` line for a missing or damaged run, a run of another
    command, runs of different instruments, or two runs with the same label."""
    if not paths:
        raise PsymError("contamination tables: give at least one run directory")
    if labels and len(labels) != len(paths):
        raise PsymError(
            f"--label: {len(labels)} label(s) for {len(paths)} run(s); give one per run"
        )
    runs = [_run_values(Path(p), labels[i] if labels else None) for i, p in enumerate(paths)]
    first = runs[0]
    for run in runs[1:]:
        if set(run.names) != set(first.names):
            raise PsymError(
                f"{run.path} probes {', '.join(sorted(run.names))} but {first.path} probes "
                f"{', '.join(sorted(first.names))}: the paper's tables compare models on the "
                f"same instruments (Table 1 averages over them); give runs of the same --tasks"
            )
    seen: dict[str, Path] = {}
    for run in runs:
        if run.label in seen:
            raise PsymError(
                f"{run.path} and {seen[run.label]} both have the row label {run.label!r}; "
                f"name each run with --label"
            )
        seen[run.label] = run.path
    return runs


def _mean(cells: Sequence[Cell], what: Sequence[str]) -> Cell:
    """The unweighted mean, or undefined naming the first undefined input."""
    for cell, name in zip(cells, what, strict=True):
        if cell.value is None:
            return Cell(None, f"{name}: {cell.reason}")
    return Cell(sum(c.value for c in cells if c.value is not None) / len(cells))


def _instruments(runs: Sequence[RunValues]) -> list[str]:
    tasks = list(runs[0].names)
    return [t for t in PAPER_ORDER if t in tasks] + [t for t in tasks if t not in PAPER_ORDER]


def paper_tables(runs: Sequence[RunValues]) -> list[Table]:
    """Table 1 (model means over instruments, plus "Average"), Table 2 (instrument means over
    models), then one table per instrument (Tables 3-6 for the paper's four), in that order."""
    tasks = _instruments(runs)
    names = runs[0].names
    probes = [p for p, _ in PAPER_COLUMNS]
    per_model = [
        (r.label, [_mean([r.values[t, p] for t in tasks], tasks) for p in probes]) for r in runs
    ]
    labels = [r.label for r in runs]
    average = [_mean([row[i] for _, row in per_model], labels) for i in range(len(probes))]
    shown = ", ".join(names[t] for t in tasks)
    out = [
        Table(f"Table 1: averaged across {shown}", "Model", [*per_model, ("Average", average)], 2),
        Table(
            f"Table 2: per questionnaire, averaged over {len(runs)} model(s)",
            "Questionnaire",
            [
                (names[t], [_mean([r.values[t, p] for r in runs], labels) for p in probes])
                for t in tasks
            ],
            3,
        ),
    ]
    for n, t in enumerate(tasks, start=3):
        rows = [(r.label, [r.values[t, p] for p in probes]) for r in runs]
        out.append(Table(f"Table {n}: {names[t]}", "Model", rows, 2, per_instrument=True))
    return out


def _differing_options(runs: Sequence[RunValues]) -> list[str]:
    keys = sorted({k for r in runs for k in r.options})
    return [k for k in keys if len({repr(r.options.get(k)) for r in runs}) > 1]


def _md_cell(cell: Cell, digits: int) -> str:
    return "—" if cell.value is None else f"{cell.value:.{digits}f}"


def _md_text(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(tables: Sequence[Table], runs: Sequence[RunValues]) -> str:
    """The tables as Markdown (the paper's rounding), with notes on undefined cells."""
    header = [h for _, h in PAPER_COLUMNS]
    lines: list[str] = []
    notes: list[str] = []
    for table in tables:
        lines += [f"## {_md_text(table.title)}", ""]
        lines.append("| " + " | ".join([table.first, *header]) + " |")
        lines.append("|" + "---|" * (len(header) + 1))
        for label, cells in table.rows:
            lines.append(
                "| "
                + " | ".join([_md_text(label)] + [_md_cell(c, table.digits) for c in cells])
                + " |"
            )
            for (probe, _), c in zip(PAPER_COLUMNS, cells, strict=True):
                if c.value is None and table.per_instrument:
                    notes.append(f"{table.title.split(':')[0]}, {label}, {probe}: {c.reason}")
        lines.append("")
    differ = _differing_options(runs)
    if differ:
        notes.insert(0, f"the runs differ in the recorded options {', '.join(differ)}")
    if notes:
        lines += ["Notes (— = undefined):", ""] + [f"- {_md_text(n)}" for n in notes] + [""]
    return "\n".join(lines)


def _csv_cell(text: str) -> str:
    """A text cell a spreadsheet will not run as a formula (OWASP CSV injection)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def to_csv(tables: Sequence[Table]) -> str:
    """The tables as one CSV: ``table``, the row's label, then the five metrics (unrounded;
    an undefined value is an empty cell)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["table", "row", *[h for _, h in PAPER_COLUMNS]])
    for table in tables:
        for label, cells in table.rows:
            values = ["" if c.value is None else repr(c.value) for c in cells]
            writer.writerow([_csv_cell(table.title), _csv_cell(label), *values])
    return buf.getvalue()


def output_format(path: Path | None) -> str:
    """``md`` or ``csv`` from the output's suffix (Markdown on stdout without one)."""
    if path is None:
        return "md"
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("md", "csv"):
        raise PsymError(f"--output {str(path)[:200]!r}: expected a .md or .csv file name")
    return fmt


def render(tables: Sequence[Table], runs: Sequence[RunValues], fmt: str) -> str:
    """The tables as ``md`` (Markdown) or ``csv`` text."""
    return to_csv(tables) if fmt == "csv" else to_markdown(tables, runs)


def write_output(path: Path, text: str, inputs: Sequence[Path] = ()) -> Path:
    """Write ``text`` to ``path`` atomically (the one place the tables are written, through
    the core's ``atomic_write``). Refuses a target that is not a regular file or a
    new path, one under /proc or /sys, and any of the command's own inputs."""
    shown = str(path)
    if not shown.strip():
        raise PsymError("--output: empty path (expected a .md or .csv file name)")
    target = Path(os.path.abspath(path))
    if target.parts[1:2] in (("proc",), ("sys",)):
        raise PsymError(
            f"{path}: expected a regular file or a new path, not under /{target.parts[1]}"
        )
    try:
        if os.path.lexists(target) and not target.is_file():
            raise PsymError(f"{path}: expected a regular file or a new path")
        for src in inputs:
            if target.exists() and src.exists() and os.path.samefile(target, src):
                raise PsymError(
                    f"{path}: is one of the command's inputs ({src}); choose another file"
                )
    except OSError as exc:
        raise PsymError(f"{path}: cannot write ({exc.strerror or exc})") from None
    try:
        atomic_write(target, text)
    except OSError as exc:
        raise PsymError(f"{path}: cannot write ({exc.strerror or exc})") from None
    return path


def run_inputs(runs: Sequence[RunValues]) -> list[Path]:
    """The files the command reads (never written over)."""
    names = ("results.json", "samples.jsonl", "contamination.json", "judge.jsonl")
    return [r.path / n for r in runs for n in names]
