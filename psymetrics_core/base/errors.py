"""Error types: every user-facing failure is a ``PsymError`` rendered as one line by the CLI."""

from __future__ import annotations

__all__ = [
    "PsymError",
    "SpecError",
    "ResponsesError",
    "UnknownTaskError",
    "PluginLoadError",
    "BackendError",
]


class PsymError(Exception):
    """Base class for errors that the CLI prints as a single line (no traceback)."""


class SpecError(PsymError):
    """An instrument spec (YAML or item CSV) is invalid; the message names file, row and field."""

    def __init__(
        self, path: object, message: str, *, row: int | None = None, field: str | None = None
    ) -> None:
        where = str(path)
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.row = row
        self.field = field


class ResponsesError(PsymError):
    """A responses file given to ``psym score`` is malformed; the message names the row."""


class UnknownTaskError(PsymError):
    """A task id was asked for that no loaded plugin registers."""


class PluginLoadError(PsymError):
    """A plugin failed to import or register (raised only in strict mode)."""


class BackendError(PsymError):
    """A model backend could not be created or failed in a way the user must fix."""
