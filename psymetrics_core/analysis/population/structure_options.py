"""What the structural analyses of a population task are asked to compute
(``StructureOptions``: ``--group``, ``--efa``, ``--rotation``, ``--cfa-model``) and the CFA model
a ``--cfa-model`` file holds (lavaan syntax, read by ``read_cfa_model``).

Its own module so the options (held by ``options.PopulationOptions`` and read by the CLI) do not
import the analysis that uses them (``structure``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from psymetrics_core.analysis.records import unit_label
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import read_text
from psymetrics_core.records.read import read_results

__all__ = ["CFAModel", "Statement", "StructureOptions", "read_cfa_model"]

_NAME = re.compile(r"[A-Za-z0-9_.]+")
_TERM = re.compile(r"(?:[-+]?(?:\d+\.?\d*|\.\d+|NA)\*)?([A-Za-z0-9_.]+)")


@dataclass(frozen=True)
class Statement:
    """One model statement: ``lhs =~ a + b`` or ``lhs ~~ a``, with its line in the file."""

    line: int
    lhs: str
    op: str
    terms: tuple[str, ...]  # as written (with modifiers such as 0*)
    names: tuple[str, ...]  # the variable names of ``terms``


@dataclass(frozen=True)
class CFAModel:
    """A CFA model read from a file in lavaan syntax (``=~`` and ``~~`` statements)."""

    path: str
    statements: tuple[Statement, ...]
    task: str | None = None  # the task it is fitted to (--cfa-model TASK=FILE)

    @property
    def syntax(self) -> str:
        return "\n".join(f"{s.lhs} {s.op} {' + '.join(s.terms)}" for s in self.statements)

    @property
    def factors(self) -> set[str]:
        return {s.lhs for s in self.statements if s.op == "=~"}

    def unknown(self, columns: Sequence[str]) -> tuple[int, str] | None:
        """(line, name) of the first name that is neither a factor nor a column."""
        known = self.factors | {str(c) for c in columns}
        for s in self.statements:
            for name in (s.lhs, *s.names):
                if name not in known:
                    return s.line, name
        return None


_TASK_PREFIX = re.compile(r"([a-z0-9][a-z0-9_-]*)=(.+)")


def read_cfa_model(path: str | Path) -> CFAModel:
    """Parse ``path`` (``TASK=FILE``: the model of that task); a line that is not
    ``F =~ item + item`` or ``a ~~ b`` is one error naming the file and line (``#`` starts a
    comment; ``;`` separates statements)."""
    task = None
    m = _TASK_PREFIX.fullmatch(str(path))
    if m is not None and not Path(path).exists():
        task, path = m.group(1), m.group(2)
    text = read_text(path, what="CFA model (lavaan syntax)", limit=1024 * 1024)
    out: list[Statement] = []
    for n, raw in enumerate(text.splitlines(), 1):
        for part in raw.split("#", 1)[0].split(";"):
            if part.strip():
                out.append(_statement(str(path), n, part.strip()))
    if not any(s.op == "=~" for s in out):
        raise PsymError(f"--cfa-model {path}: no 'factor =~ item + item' line")
    return CFAModel(str(path), tuple(out), task)


def _statement(path: str, n: int, text: str) -> Statement:
    where = f"--cfa-model {path}, line {n}"
    op = "=~" if "=~" in text else "~~" if "~~" in text else None
    if op is None:
        raise PsymError(f"{where}: expected 'factor =~ item + item' or 'a ~~ b', got {text[:60]!r}")
    lhs, rhs = (t.strip() for t in text.split(op, 1))
    if not _NAME.fullmatch(lhs):
        raise PsymError(f"{where}: {lhs[:40]!r} is not a factor or item name")
    terms = tuple(t.strip() for t in rhs.split("+"))
    names = []
    for t in terms:
        m = _TERM.fullmatch(t)
        if m is None:
            raise PsymError(f"{where}: {t[:40]!r} is not an item or factor name")
        names.append(m.group(1))
    return Statement(n, lhs, op, terms, tuple(names))


@dataclass(frozen=True)
class StructureOptions:
    """What to compute beyond parallel analysis: ``group`` (model, condition or a label),
    ``efa`` (a number of factors or ``"auto"``), its ``rotation`` (None: unrotated) and a CFA
    ``cfa_model``; ``run_labels`` maps run directories to model labels (``for_runs``)."""

    group: str | None = None
    efa: int | str | None = None
    rotation: str | None = "oblimin"
    cfa_model: CFAModel | None = None
    run_labels: Mapping[str, str] = field(default_factory=dict)

    def asked(self) -> str:
        """The options given, as written on the command line ('' when none)."""
        given = (("--group", self.group), ("--efa", self.efa), ("--cfa-model", self.cfa_model))
        return ", ".join(name for name, v in given if v is not None)

    def for_runs(self, run_dirs: Sequence[Path]) -> StructureOptions:
        """With each run's model label (its directory name when runs share a label)."""
        if self.group != "model":
            return self
        labels = {str(r): unit_label(read_results(Path(r) / "results.json")) for r in run_dirs}
        if len(set(labels.values())) < len(labels):
            labels = {str(r): _unique_name(Path(r), run_dirs) for r in run_dirs}
        return replace(self, run_labels=labels)


def _unique_name(run: Path, run_dirs: Sequence[Path]) -> str:
    same = [r for r in run_dirs if Path(r).name == run.name]
    return run.name if len(same) == 1 else f"{run.name}#{same.index(run) + 1}"
