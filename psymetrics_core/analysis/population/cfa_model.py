"""CFA models in lavaan syntax (``--cfa-model [TASK=]FILE``): read, bounded and checked for
local identification (``identification``) before any fit.

A file holds ``F =~ item + item`` and ``a ~~ b`` statements (``#`` starts a comment, ``;``
separates statements; a term may carry a numeric or ``NA`` modifier, ``0.5*x``). A line that
is not one of them, a name that is not a name, and a model over the bounds (``MAX_FACTORS``
factors, ``MAX_TERMS`` terms: docs/reference/bounds.md) are one error naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from psymetrics_core.analysis.population.identification import (
    MAX_FACTORS,
    MAX_TERMS,
    identification_problem,
)
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import read_text

__all__ = ["Statement", "CFAModel", "read_cfa_model"]

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

    @property
    def observed(self) -> set[str]:
        """The names of the model that are not factors (the items)."""
        names = {n for s in self.statements for n in (s.lhs, *s.names)}
        return names - self.factors

    def identification(self) -> str | None:
        """Why the model is not locally identified (``identification.identification_problem``;
        None: it is)."""
        loadings: dict[str, list[str]] = {}
        for s in self.statements:
            if s.op == "=~":
                loadings.setdefault(s.lhs, []).extend(s.terms)
        cov = [(s.lhs, t) for s in self.statements if s.op == "~~" for t in s.terms]
        return identification_problem(loadings, cov)

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
    model = CFAModel(str(path), tuple(out), task)
    terms = sum(len(s.terms) for s in out)
    if len(model.factors) > MAX_FACTORS or terms > MAX_TERMS:
        size = f"{len(model.factors):,} factors and {terms:,} loadings and covariances"
        bound = f"at most {MAX_FACTORS} factors and {MAX_TERMS:,} terms"
        raise PsymError(f"--cfa-model {path}: {size}; {bound} (docs/reference/bounds.md)")
    return model


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
