"""``psym ARGS`` run in this process, seen as a finished process is: exit status, stdout, stderr.

``psym_main`` calls ``psymetrics_core.cli.main`` (the console script's own function: the same
parsing, library calls and one-line ``psym: error:`` rendering) with stdout and stderr captured,
``PSYM_CACHE_DIR`` and other environment variables set for the call only, and optionally another
working directory (``replace_env``: the given environment only; ``merged``: stdout and stderr
as one text). It saves the Python start-up and imports of a subprocess per command (about
a second of CPU each). Tests of the process itself (a killed or signalled run, processes
running at once, the console entry point's exit code and streams) keep real subprocesses.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Ran", "psym_main"]


@dataclass(frozen=True)
class Ran:
    """What one ``psym`` command line gave (the fields of ``subprocess.CompletedProcess``)."""

    returncode: int
    stdout: str
    stderr: str


@contextmanager
def _environment(env: Mapping[str, str], cwd: Path | None, replace: bool) -> Iterator[None]:
    saved = dict(os.environ)
    here = os.getcwd()
    if replace:
        os.environ.clear()
    os.environ.update(env)
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved)


def psym_main(
    args: Sequence[str | Path],
    *,
    cache: Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    session: Any = None,
    replace_env: bool = False,
    merged: bool = False,
) -> Ran:
    """``psym ARGS`` in this process with ``PSYM_CACHE_DIR=cache`` (and ``env``) in ``cwd``.

    ``replace_env``: ``env`` is the whole environment of the call (as ``subprocess.run(env=)``),
    not additions to this process's. ``merged``: stderr goes into the same text as stdout, in
    the order printed (``Ran.stdout``; ``Ran.stderr`` is empty), as a terminal shows both."""
    from psymetrics_core.cli import main

    changes = {**(env or {}), **({"PSYM_CACHE_DIR": str(cache)} if cache is not None else {})}
    out = io.StringIO()
    err = out if merged else io.StringIO()
    with _environment(changes, cwd, replace_env), redirect_stdout(out), redirect_stderr(err):
        try:
            main([str(a) for a in args], session=session)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return Ran(code, out.getvalue(), "" if merged else err.getvalue())
