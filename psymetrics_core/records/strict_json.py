"""JSON of run records, parsed strictly: what ``json.loads`` accepts silently is refused here.

- a key twice in one object (``json`` keeps the last: a duplicated ``"tasks"`` would drop
  every task of the first) is refused, naming the key and the line of its second use;
- integers beyond 64 bits (a 5,000-digit integer is refused before Python converts it, which
  would raise past ``sys.int_info.str_digits_check_threshold``) and numbers that overflow a
  float (``1e400``) are refused; ``NaN`` and ``Infinity`` are not JSON numbers.

Text is read by the bounded readers of ``base.reading`` (size cap, UTF-8); the errors are one
``InputError`` line naming the file and line.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from psymetrics_core.base.reading import InputError, read_text, where
from psymetrics_core.records.fields import MAX_INT

__all__ = ["parse_record", "load_record"]

_MAX_DIGITS = len(str(MAX_INT))


class _Bad(Exception):
    """A value the strict parser refuses (the message says which)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Bad(f"key '{key[:80]}' appears twice in one object", key)
        out[key] = value
    return out


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > _MAX_DIGITS or abs(value := int(text)) > MAX_INT:
        raise _Bad(f"an integer of {digits:,} digits is beyond 64 bits (at most {MAX_INT:,})")
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Bad(f"the number {text[:40]} is too large for a float")
    return value


def _constant(name: str) -> Any:
    raise _Bad(f"{name} is not a JSON number")


def _second_use(text: str, key: str) -> int | None:
    """The line of the second ``"key":`` in ``text`` (None if not found)."""
    hits = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
    return text.count("\n", 0, hits[1]) + 1 if len(hits) > 1 else None


def parse_record(text: str, path: str | Path, *, line: int | None = None) -> Any:
    """Parse the JSON ``text`` of a run record (from ``path``; ``line`` for one JSONL line)."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=_int,
            parse_float=_float,
            parse_constant=_constant,
        )
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise InputError(f"{where(path, at)}: invalid JSON ({exc.msg})") from None
    except _Bad as exc:
        pos = line
        if line is None and exc.key is not None:
            pos = _second_use(text, exc.key)
        raise InputError(f"{where(path, pos)}: invalid JSON ({exc})") from None
    except RecursionError:
        raise InputError(f"{where(path, line)}: invalid JSON (nested too deeply)") from None


def load_record(path: str | Path, *, what: str) -> Any:
    """Read (bounded, UTF-8) and strictly parse the JSON file at ``path``."""
    return parse_record(read_text(path, what=what), path)
