"""Bounded, one-line-error reading of every user-supplied file (YAML, JSON, CSV, text).

Every loader reads through here (the one bounded-reader module), so hostile or broken files
fail the same way: one ``PsymError`` line naming the file (and line where known) instead of a
traceback or a hang.

- size: files larger than ``max_bytes`` (default 16 MiB, ``$PSYM_MAX_INPUT_BYTES``) are refused
  before they are read;
- encoding: text must be UTF-8 (a BOM is dropped); the error names the line and byte offset;
- YAML: the safe loader only, with at most ``MAX_YAML_ALIASES`` alias references and nesting
  ``MAX_DEPTH`` deep (a "billion laughs" alias bomb is refused, not expanded);
- JSON: syntax errors name the line; nesting deeper than Python's recursion limit is refused;
- CSV: rows come with their line number; a field over the csv module's limit (131,072
  characters), a NUL byte or a broken quote is one line naming the file and row.
"""

from __future__ import annotations

import csv
import io
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from psymetrics_core.base.errors import PsymError, SpecError

__all__ = [
    "InputError",
    "MAX_BYTES",
    "MAX_YAML_ALIASES",
    "MAX_DEPTH",
    "read_text",
    "regular_file",
    "read_lines",
    "load_yaml",
    "parse_yaml",
    "load_json",
    "parse_json",
    "CsvTable",
    "read_csv",
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


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader with caps on alias references, expanded size and nesting depth.

    The expanded size counts every node as often as aliases repeat it (what a consumer walking
    the data would visit), so a small "billion laughs" file is refused before it is built.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0
        self._sizes: dict[int, int] = {}
        self._total = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise Refused(
                    f"more than {MAX_YAML_ALIASES} alias references (*name)",
                    self.peek_event().start_mark.line + 1,
                )
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise Refused(
                f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark.line + 1
            )
        try:
            node: yaml.Node = super().compose_node(parent, index)  # type: ignore[assignment]
        finally:
            self._depth -= 1
        size = self._sizes.get(id(node))
        if size is None:
            size = 1 + sum(self._sizes.get(id(c), 1) for c in _children(node))
            self._sizes[id(node)] = size
        else:  # an alias: the whole anchored subtree again
            self._total += size
        if size > MAX_EXPANDED or self._total > MAX_EXPANDED:
            raise Refused(
                f"aliases expand it to more than {MAX_EXPANDED:,} values; refusing a possible "
                "alias bomb",
                node.start_mark.line + 1,
            )
        return node


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def _plain_for_libyaml(text: str) -> bool:
    """Whether ``text`` parses without aliases and within ``MAX_DEPTH`` (libyaml's event scan),
    so libyaml's safe loader builds exactly what the bounded loader would, an order of
    magnitude faster. Anything else (aliases, deep nesting, a syntax error) goes through the
    bounded pure-Python loader, which enforces the caps and words the error; nesting deeper
    than ``MAX_DEPTH`` is refused here at once, as is nesting past libyaml's own limit (its
    scanner stops there before the events reach ``MAX_DEPTH``; the pure-Python scanner would
    take time quadratic in the brackets to say the same)."""
    if not getattr(yaml, "__with_libyaml__", False):
        return False
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.AliasEvent):
                return False
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    line = mark.line + 1 if mark is not None else 1
                    raise Refused(f"nested more than {MAX_DEPTH} levels deep", line)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        if getattr(exc, "problem", None) == "exceeded maximum nesting depth":  # libyaml's 1,000
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else 1
            raise Refused(f"nested more than {MAX_DEPTH} levels deep", line) from None
        return False
    return True


def parse_bounded(text: str, path: str | Path) -> Any:
    """Parse YAML ``text`` (from ``path``) with the bounded safe loader."""
    try:
        plain = _plain_for_libyaml(text)
    except Refused as exc:
        raise InputError(f"{where(path, exc.line)}: invalid YAML ({exc})") from None
    if plain:
        try:
            return yaml.load(text, Loader=yaml.CSafeLoader)  # noqa: S506 (the safe loader)
        except (yaml.YAMLError, ValueError, OverflowError, TypeError, RecursionError):
            pass  # the bounded loader below words the error
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(text)
        return loader.get_single_data()
    except Refused as exc:
        raise InputError(f"{where(path, exc.line)}: invalid YAML ({exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{where(path, line)}: invalid YAML ({problem})") from None
    except RecursionError:
        raise InputError(f"{path}: invalid YAML (nested too deeply)") from None
    except (ValueError, OverflowError, TypeError) as exc:  # e.g. a timestamp out of range
        raise InputError(f"{path}: invalid YAML value ({exc})".splitlines()[0]) from None
    finally:
        if loader is not None:
            loader.dispose()


def max_bytes() -> int:
    """The size cap for input files: ``$PSYM_MAX_INPUT_BYTES`` or 16 MiB."""
    raw = os.environ.get("PSYM_MAX_INPUT_BYTES", "")
    try:
        return int(raw) if raw else MAX_BYTES
    except ValueError:
        return MAX_BYTES


_PSEUDO = (("proc",), ("sys",))  # kernel interfaces, whose entries stat as regular files


def regular_file(p: Path, what: str) -> os.stat_result:
    """The ``stat`` of ``p`` when it is a regular file outside /proc and /sys; else one
    ``InputError`` (a directory, device, FIFO or socket is refused before it is opened, so a
    FIFO cannot block and ``/proc/self/environ`` is never read)."""
    st = p.stat()  # an OSError is the caller's (no such file, permission denied)
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{p}: is a directory, expected a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{p}: not a regular file (a device, FIFO or socket), expected a {what}")
    if p.resolve().parts[1:2] in _PSEUDO:
        top = p.resolve().parts[1]
        raise InputError(f"{p}: a file of /{top} (a kernel interface), expected a {what}")
    return st


def read_text(path: str | Path, *, what: str = "file", limit: int | None = None) -> str:
    """The UTF-8 text of ``path`` (BOM dropped), refusing missing, huge or non-UTF-8 files and
    anything but a regular file (``regular_file``)."""
    p = Path(path)
    cap = max_bytes() if limit is None else limit
    try:
        size = regular_file(p, what).st_size
        if size > cap:
            raise InputError(
                f"{p}: {what} is {size:,} bytes, over the {cap:,}-byte limit for input files "
                "(set PSYM_MAX_INPUT_BYTES to raise it)"
            )
        with p.open("rb") as fh:
            data = fh.read(cap + 1)
    except OSError as exc:
        raise _unreadable(p, what, exc) from None
    if len(data) > cap:
        raise InputError(f"{p}: {what} is over the {cap:,}-byte limit for input files")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{p}, line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}); save the {what} as UTF-8"
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def _unreadable(p: Path, what: str, exc: OSError) -> InputError:
    """The one-line error for a file that could not be opened or read."""
    if isinstance(exc, FileNotFoundError):
        return InputError(f"{p}: no such file (expected a {what})")
    if isinstance(exc, PermissionError):
        return InputError(f"{p}: permission denied reading the {what}")
    return InputError(f"{p}: cannot read the {what} ({exc.strerror or exc})")


def read_lines(path: str | Path, *, what: str = "file") -> Iterator[tuple[int, str]]:
    """Each line of the UTF-8 text file ``path`` as (line number, text), read one line at a
    time: no cap on the file (a long run's JSONL records), each line at most ``max_bytes()``;
    a missing file, an over-long line or a line that is not UTF-8 is one ``InputError``."""
    p = Path(path)
    cap = max_bytes()
    try:
        regular_file(p, what)
        fh = p.open("rb")
    except OSError as exc:
        raise _unreadable(p, what, exc) from None
    with fh:
        n = 0
        while raw := fh.readline(cap + 1):
            n += 1
            if len(raw) > cap:
                raise InputError(
                    f"{p}, line {n}: a line of the {what} is over the {cap:,}-byte limit for "
                    "input files (set PSYM_MAX_INPUT_BYTES to raise it)"
                )
            if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{p}, line {n}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the "
                    f"{what} as UTF-8"
                ) from None
            yield n, line.rstrip("\r\n")


def parse_yaml(text: str, path: str | Path) -> Any:
    """Parse YAML ``text`` (from ``path``) with the bounded safe loader (``safe_yaml``)."""
    return parse_bounded(text, path)


def load_yaml(path: str | Path, *, what: str = "YAML file") -> Any:
    """Read and parse the YAML file at ``path`` (size-capped, UTF-8, alias/depth bounded)."""
    return parse_yaml(read_text(path, what=what), path)


def parse_json(text: str, path: str | Path, *, line: int | None = None) -> Any:
    """Parse JSON ``text`` (from ``path``; ``line`` for one JSONL line)."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise InputError(f"{where(path, at)}: invalid JSON ({exc.msg})") from None
    except Refused as exc:
        raise InputError(f"{where(path, line)}: invalid JSON ({exc})") from None
    except RecursionError:
        raise InputError(f"{where(path, line)}: invalid JSON (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise InputError(f"{where(path, line)}: invalid JSON ({exc})") from None


def _no_constant(name: str) -> Any:
    raise Refused(f"{name} is not a JSON number", 0)


def load_json(path: str | Path, *, what: str = "JSON file") -> Any:
    """Read and parse the JSON file at ``path`` (size-capped, UTF-8, NaN/Infinity refused)."""
    return parse_json(read_text(path, what=what), path)


@dataclass
class CsvTable:
    """A CSV file's header and rows, each row with the line number it starts on."""

    path: Path
    columns: list[str]
    rows: list[tuple[int, dict[str, str]]]


def read_csv(path: str | Path, *, what: str = "CSV file", strip_header: bool = True) -> CsvTable:
    """Read the CSV at ``path``: header names (stripped) and ``(line, row)`` pairs.

    Cells of missing trailing columns are ``""``; the errors of the csv module (field over
    131,072 characters, NUL byte, unterminated quote) become one line naming file and line.
    """
    p = Path(path)
    text = read_text(p, what=what)
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise InputError(f"{p}, line {line}: a NUL byte in a CSV file (is it a binary file?)")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, dict[str, str]]] = []
    columns: list[str] = []
    try:
        for n, record in enumerate(_records(reader)):
            if n == 0:
                columns = [c.strip() if strip_header else c for c in record]
                continue
            if not record:  # a blank line (as csv.DictReader skips it)
                continue
            line = reader.line_num - _extra_lines(record)
            row = {c: (record[i] if i < len(record) else "") for i, c in enumerate(columns)}
            rows.append((line, row))
    except csv.Error as exc:
        msg = str(exc)
        if "field larger than field limit" in msg:
            msg = f"a field is longer than {csv.field_size_limit():,} characters"
        raise InputError(f"{p}, line {reader.line_num}: unreadable CSV ({msg})") from None
    return CsvTable(p, columns, rows)


def _records(reader: Any) -> Iterator[list[str]]:
    yield from reader


def _extra_lines(record: list[str]) -> int:
    """Newlines inside quoted cells (so a row's number is the line it starts on)."""
    return sum(cell.count("\n") for cell in record)
