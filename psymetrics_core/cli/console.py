"""The only place rich is used: stderr console, progress bars and tables."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from psymetrics_core.base.jsonable import json_ready

__all__ = [
    "stderr",
    "stdout",
    "progress_bar",
    "status_lines",
    "print_json",
    "fmt",
    "table",
    "add_rows",
    "ROW_CAP",
]

stderr = Console(stderr=True)
stdout = Console(highlight=False)


class _BarOnFirstTask(Progress):
    """A ``Progress`` that shows from its first task: a command that fails before any (e.g. a
    refused ``--output``, claimed by the library call inside the ``with``) prints its one
    error line alone."""

    def __enter__(self) -> _BarOnFirstTask:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live.is_started:
            self.stop()

    def add_task(self, *args: Any, **kwargs: Any) -> Any:
        self.start()  # once: starting a started bar does nothing
        return super().add_task(*args, **kwargs)


def progress_bar() -> Progress:
    """A progress bar on stderr for long model work (shown from its first task on)."""
    return _BarOnFirstTask(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=False,
    )


@contextmanager
def status_lines() -> Iterator[None]:
    """Print the one-line status messages of the library and plugins (the ``psymetrics.status``
    logger: e.g. a model prepared once before its first answer) on stderr, above any progress
    bars, while the block runs."""

    class _Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            stderr.print(
                f"psym: {record.getMessage()}",
                style="dim",
                markup=False,
                soft_wrap=True,
                highlight=False,
            )

    log = logging.getLogger("psymetrics.status")
    handler, level = _Handler(), log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


def print_json(data: Any) -> None:
    """Print ``data`` as JSON on stdout (NaN becomes null)."""
    print(json.dumps(json_ready(data), indent=2, ensure_ascii=False))


def fmt(x: float | None, digits: int = 2) -> str:
    """A score for a table: fixed digits, or an em dash when missing."""
    return "—" if x is None else f"{x:.{digits}f}"


def table(title: str, columns: list[str]) -> Table:
    """A plain table with the given column headers."""
    t = Table(title=title, title_justify="left")
    for c in columns:
        t.add_column(c)
    return t


ROW_CAP = 20  # rows of a per-cell table on screen (a population run has one cell per respondent)


def add_rows(t: Table, rows: Iterable[Sequence[str]], where: str = "--json") -> None:
    """Add ``rows`` to ``t``, the first ``ROW_CAP`` of them; the table's caption then says how
    many more there are and ``where`` they all are."""
    n = 0
    for row in rows:
        n += 1
        if n <= ROW_CAP:
            t.add_row(*row)
    if n > ROW_CAP:
        t.caption = f"... {n - ROW_CAP} more rows (all in {where})"
        t.caption_justify = "left"
