"""Run directories: one run per ``--output`` at a time, no silent overwrite, no empty leftovers.

``claim_run_dir(path, overwrite=..., resume=...)`` is a context manager around a run:

- it checks the path first (a file in the way, a read-only parent, ``results.json`` that is a
  folder) and reports each problem in one line before any model is loaded;
- a directory already holding a run (``results.json`` or ``samples.jsonl``) is refused unless
  ``overwrite`` (its records are removed first) or ``resume`` (the run is repeated into it; the
  response cache supplies every response already paid for);
- it holds an exclusive lock (``.psym.lock``, ``flock``) for the whole run, so a second run
  writing the same directory stops at once with a line naming the first one's process;
- when the run fails, a directory it created is removed again if nothing was written into it
  (an empty ``samples.jsonl`` counts as nothing).

Every run directory is claimed once, by the library function that writes it
(``evaluate(output=...)``, the plan runner, ``merge``, ``contamination(output=...)``); the
commands only pass the path on. ``claim_run_dir`` yields a :class:`RunDir`, the proof of the
claim: a writer that claimed a directory and hands the run to another writer (the plan runner
and ``contamination`` to ``evaluate``) passes it as ``run_dir=``, so nothing is claimed twice
and no process-wide record of claims exists. A second ``claim_run_dir`` of a held directory is
refused, even in-process.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from psymetrics_core.base.errors import PsymError

__all__ = ["RunDir", "claim_run_dir", "check_output_path", "LOCK_NAME", "RUN_FILES"]

LOCK_NAME = ".psym.lock"
RUN_FILES = ("results.json", "samples.jsonl", "judge.jsonl", "contamination.json")


@dataclass(frozen=True)
class RunDir:
    """A run directory this process holds, for the ``with claim_run_dir(...)`` block that
    yielded it (pass it on as ``run_dir=`` instead of claiming the directory again)."""

    path: Path


def check_output_path(path: Path) -> None:
    """One-line errors for an ``--output`` that cannot hold a run."""
    for parent in [path, *path.parents]:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                what = "is" if parent == path else f"is under {parent}, which is"
                raise PsymError(f"--output {path}: {what} a file, not a folder")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise PsymError(f"--output {path}: {parent} is not writable")
            break
    results = path / "results.json"
    if results.exists() and not results.is_file():
        raise PsymError(f"--output {path}: {results} exists and is not a file")


def _holds_run(path: Path) -> bool:
    return any((path / name).exists() for name in RUN_FILES)


@contextmanager
def claim_run_dir(path: Path, *, overwrite: bool = False, resume: bool = False) -> Iterator[RunDir]:
    """Hold ``path`` as this run's directory for the ``with`` block (see the module docstring)."""
    if overwrite and resume:
        raise PsymError("--overwrite and --resume exclude each other")
    check_output_path(path)
    created = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PsymError(f"--output {path}: cannot create it ({exc.strerror or exc})") from None
    lock: IO[str] | None = None
    try:
        lock = _lock(path)
        if _holds_run(path) and not (overwrite or resume):
            raise PsymError(
                f"--output {path} already holds a run; pass --overwrite to replace it, or "
                "--resume to repeat it there (responses come from the cache)"
            )
        if overwrite:
            for name in RUN_FILES:
                (path / name).unlink(missing_ok=True)
        yield RunDir(path)
    except BaseException:
        if lock is not None:
            _unlock(path, lock)
            lock = None
        if created:
            _remove_if_empty(path)
        raise
    finally:
        if lock is not None:
            _unlock(path, lock)


def _lock(path: Path) -> IO[str]:
    lock_path = path / LOCK_NAME
    try:
        fh = lock_path.open("a+", encoding="utf-8")
    except OSError as exc:
        raise PsymError(f"--output {path}: cannot write there ({exc.strerror or exc})") from None
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            fh.close()
            raise PsymError(f"--output {path}: cannot lock it ({exc.strerror})") from None
        fh.seek(0)
        holder = fh.read().strip() or "?"
        fh.close()
        raise PsymError(
            f"--output {path} is in use by another psym run (pid {holder}); wait for it or "
            "choose another --output"
        ) from None
    fh.seek(0)
    fh.truncate()
    fh.write(str(os.getpid()))
    fh.flush()
    return fh


def _unlock(path: Path, fh: IO[str]) -> None:
    """Release the lock; the (emptied) lock file stays, so no later run can lock a stale inode."""
    try:
        fh.seek(0)
        fh.truncate()
    except OSError:
        pass
    fh.close()


def _remove_if_empty(path: Path) -> None:
    """Remove ``path`` if the failed run left nothing in it (empty files count as nothing)."""
    try:
        entries = list(path.iterdir())
        if any(not p.is_file() or p.stat().st_size > 0 for p in entries):
            return
        for p in entries:
            p.unlink()
        path.rmdir()
    except OSError:
        pass
