"""What the bounded readers of user files share (``safe_io`` and its YAML loader ``safe_yaml``):
the caps, the one-line error and how a place in a file is named."""

from __future__ import annotations

from pathlib import Path

from psymetrics_core.base.errors import PsymError, SpecError

__all__ = [
    "MAX_BYTES",
    "MAX_YAML_ALIASES",
    "MAX_DEPTH",
    "MAX_EXPANDED",
    "InputError",
    "Refused",
    "where",
]

MAX_BYTES = 16 * 1024 * 1024
MAX_YAML_ALIASES = 200
MAX_DEPTH = 64
MAX_EXPANDED = 200_000  # values of a YAML document with its aliases expanded


class InputError(SpecError):
    """A user-supplied file could not be read safely; the message names the file (and line).

    A ``SpecError`` (so registries that skip invalid specs skip these too), built from the
    whole message.
    """

    def __init__(self, message: str) -> None:
        PsymError.__init__(self, message)
        self.path = None
        self.row = None
        self.field = None


class Refused(Exception):
    """A reader stops on input past a cap (or not JSON); ``line`` is where, 0 when unknown."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def where(path: str | Path, line: int | None = None) -> str:
    """``path``, with ``, line N`` when the line is known."""
    return f"{path}, line {line}" if line is not None else str(path)
