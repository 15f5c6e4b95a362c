"""Refusing special files before they are opened: a plan, shard record or cache import must be
a regular file, not a device (``/dev/zero`` never ends), a FIFO (opening one blocks until a
writer comes), a socket, a directory or a file of ``/proc`` or ``/sys`` (their sizes say 0
whatever they hold).

The bounded readers of ``base.reading`` then cap what is read from the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from psymetrics_core.base.reading import InputError

__all__ = ["require_regular_file"]

_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)
_VIRTUAL = ("/proc", "/sys")


def require_regular_file(path: str | Path, *, what: str = "file") -> Path:
    """``path`` when it is a regular file (symlinks followed), else one ``InputError`` line
    naming it and what it is instead; nothing is opened."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file (expected a {what})") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read the {what} ({exc.strerror or exc})") from None
    for test, kind in _KINDS:
        if test(st.st_mode):
            raise InputError(f"{p}: is {kind}, expected a {what} (a regular file)")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{p}: is not a regular file, expected a {what}")
    real = os.path.realpath(p)
    if any(real == v or real.startswith(v + os.sep) for v in _VIRTUAL):
        raise InputError(f"{p}: is a file of {real.split(os.sep)[1]}fs, expected a {what}")
    return p
