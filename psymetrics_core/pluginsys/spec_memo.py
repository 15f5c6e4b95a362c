"""Validated instruments kept between processes: an installed spec is validated once, not on
every run, while none of its files and none of the code that validated it has changed.

An entry (``$PSYM_CACHE_DIR/specs/<hash of the spec's path>.pickle``) holds the built
``Instrument`` and the *stamp* (size, modification time, inode: ``stat_memo.stamp``) of every
file it depends on: the ``instrument.yaml``, its item CSVs, the source of each psymetrics
module loaded when it was built, and the packages that parse and validate it (PyYAML, pydantic,
pydantic-core, Jinja2). It is used only while every one of them keeps its stamp.

An entry is read with an unpickler that builds only the value types of ``base.types``,
paths, dates and Python's containers; a damaged, foreign or stale entry is no entry (the spec
is validated again and the entry rewritten), and one that cannot be written costs only the work
again next time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import pickle
import sys
from functools import cache
from pathlib import Path
from typing import Any

from psymetrics_core.base.stat_memo import stamp, store_quietly
from psymetrics_core.base.types import Instrument

__all__ = ["recall", "keep"]

_FORMAT = 1
_PARSERS = ("yaml", "pydantic", "pydantic_core", "jinja2")

# what an entry may build: the instrument's value types, paths, what YAML produces
_ALLOWED = {
    ("psymetrics_core.base.types", name)
    for name in ("Instrument", "Item", "Option", "ResponseScale", "ScaleDef", "NormGroup")
} | {
    ("pathlib", "PosixPath"),
    ("pathlib", "PurePosixPath"),
    ("pathlib", "WindowsPath"),
    ("pathlib", "PureWindowsPath"),
    ("datetime", "date"),
    ("datetime", "datetime"),
    ("datetime", "time"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
}


def recall(spec_path: Path) -> Instrument | None:
    """The instrument memoised for ``spec_path``, or None when there is no valid entry."""
    try:
        data = _entry_path(spec_path).read_bytes()
        fmt, deps, inst = _Unpickler(io.BytesIO(data)).load()
        if fmt != _FORMAT or not isinstance(inst, Instrument) or not deps:
            return None
        for dep, dep_stamp in deps:
            if stamp(Path(dep)) != dep_stamp:
                return None
    except Exception:  # missing, unreadable, damaged or foreign: validate the spec again
        return None
    inst.spec_path = spec_path  # the path as this caller named it
    return inst


def keep(spec_path: Path, inst: Instrument) -> None:
    """Memoise ``inst``, built from ``spec_path`` and its item files, with their stamps."""
    items = [spec_path.parent / rel for rel in inst.form_files.values()]
    try:
        deps = [(str(p), stamp(p)) for p in (spec_path, *items, *_code_files())]
        data = pickle.dumps((_FORMAT, deps, inst), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a file vanished, or a value that does not pickle: no entry
        return
    store_quietly(_entry_path(spec_path), data)


def _entry_path(spec_path: Path) -> Path:
    from psymetrics_core.base.paths import cache_dir

    key = hashlib.sha256(str(spec_path.resolve()).encode("utf-8")).hexdigest()[:32]
    return cache_dir() / "specs" / f"{key}.pickle"


@cache
def _code_files() -> list[Path]:
    """The source files of the psymetrics modules loaded when the process keeps its first
    spec (every module that validates one is loaded by then) and of the spec's parsers."""
    files = set()
    for name, mod in list(sys.modules.items()):
        source = getattr(mod, "__file__", None)
        if name.split(".")[0] == "psymetrics_core" and source:
            files.add(Path(source))
    for package in _PARSERS:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin:
            files.add(Path(spec.origin))
    return sorted(files)


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not an instrument value")
        return super().find_class(module, name)
