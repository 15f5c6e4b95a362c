"""The one writer of outputs: every file a command writes for the user goes through here.

``write_output(path, content, inputs=..., what=...)`` (reports, tables, plans, shard records,
analysis files, cache exports, imported instruments, plugin reports):

- the target must be a regular file or a new path: devices, FIFOs, sockets, folders and
  symbolic links to any of these are refused, and so is anything under ``/proc`` or ``/sys``
  (refused before anything there is opened);
- the target must not be one of the command's own ``inputs`` (the run records it reads, the
  response cache's database): compared by file identity (``os.path.samefile``) and by the
  resolved path;
- the content goes (``atomic_write``, the one atomic write every writer of the project shares)
  to a unique temporary file in the target's folder (``tempfile.mkstemp``, so
  concurrent writers never share one), is flushed to disk (``fsync``) and renamed over the
  target (``os.replace``): a reader sees the old file or the new one, never half of one;
- every failure (an empty path, a name too long, a parent that is a file or missing, no
  permission, a read-only or full file system) is one ``PsymError`` line naming the path and
  what was expected.

``output_dir`` checks and creates a folder that a command fills with several files
(``check_output_dir`` only checks, so a command can refuse a bad folder before its work).
``csv_cell`` neutralises a CSV cell that a spreadsheet would run as a formula (the OWASP
CSV-injection rule): a cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
gets a leading apostrophe, unless it is a plain number (``-1.5`` stays numeric).

May import: nothing of psymetrics_core but ``base``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

from psymetrics_core.base.errors import PsymError

__all__ = [
    "Content",
    "write_output",
    "atomic_write",
    "store_quietly",
    "NoTemporaryFile",
    "check_target",
    "output_dir",
    "check_output_dir",
    "csv_cell",
    "FORMULA_START",
    "NUMBER_PATTERN",
    "NEW_FILE_MODE",
]

Content = str | bytes | Callable[[IO[bytes]], None]

NAME_MAX = 255  # bytes in one file name on the common file systems (ext4, xfs, btrfs, tmpfs)
_KERNEL_FS = ("/proc", "/sys")
_EXPECTED = "expected a regular file or a new path"

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER_PATTERN = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"  # whole cell
_NUMBER = re.compile(NUMBER_PATTERN)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


NEW_FILE_MODE = 0o666 & ~_umask()  # what open(..., "w") would give a new file


def _show(path: str | os.PathLike[str]) -> str:
    """The path as a message shows it: quoted when empty or odd, shortened when very long."""
    raw = os.fspath(path)
    if not raw or raw != raw.strip() or any(c in raw for c in "\n\r\t\x00"):
        return repr(raw)
    if len(raw) > 120:
        return f"{raw[:60]}...{raw[-40:]} ({len(raw)} characters)"
    return raw


def _fail(what: str, path: str | os.PathLike[str], problem: str) -> PsymError:
    return PsymError(f"{what} {_show(path)}: {problem}")


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISREG, "a file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"  # pragma: no cover - a kind Linux does not have


def _under_kernel_fs(p: str) -> str | None:
    for root in _KERNEL_FS:
        if p == root or p.startswith(root + "/"):
            return root
    return None


def _check_name(raw: str, what: str) -> Path:
    if not raw.strip():
        raise _fail(what, raw, "an empty path; expected a file name")
    if "\x00" in raw:
        raise _fail(what, raw, "contains a NUL character; expected a file name")
    p = Path(raw)
    if raw.endswith(("/", os.sep)) or p.name in ("", ".", ".."):
        raise _fail(what, raw, "names a folder; expected a file name")
    size = len(os.fsencode(p.name))
    if size > NAME_MAX:
        raise _fail(
            what, raw, f"the file name is {size} bytes long; expected at most {NAME_MAX} bytes"
        )
    return p


def _check_kernel_fs(p: Path, what: str) -> None:
    """Refuse /proc and /sys by the spelled, absolute and resolved path (nothing is opened)."""
    for candidate in (os.path.abspath(p), os.path.realpath(p), os.path.realpath(p.parent)):
        root = _under_kernel_fs(candidate)
        if root is not None:
            raise _fail(what, p, f"is under {root} (a kernel file system); {_EXPECTED}")


def _check_folder(folder: Path, shown: Path, what: str, missing_ok: bool) -> bool:
    """Whether ``folder`` exists (as a folder); one line naming ``shown`` when an ancestor is not
    a folder, or when it is missing and not ``missing_ok``."""
    probe = folder
    while True:  # the nearest ancestor that exists must be a folder
        try:
            st = os.stat(probe)
        except (FileNotFoundError, NotADirectoryError):
            if probe == probe.parent:
                break
            probe = probe.parent
            continue
        except OSError as exc:
            raise _fail(what, shown, f"cannot reach {probe} ({exc.strerror or exc})") from None
        if not stat.S_ISDIR(st.st_mode):
            raise _fail(what, shown, f"{probe} is {_kind(st.st_mode)}, not a folder")
        break
    if probe == folder:
        return True
    if not missing_ok:
        raise _fail(what, shown, f"the folder {folder} does not exist; create it first")
    return False


def _make_folder(folder: Path, shown: Path, what: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _fail(
            what, shown, f"cannot create the folder {folder} ({exc.strerror or exc})"
        ) from None


def _check_kind(p: Path, what: str) -> os.stat_result | None:
    """The target's stat when it exists (a regular file, possibly through a link), else None."""
    try:
        lst = os.lstat(p)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _fail(what, p, f"cannot use it ({exc.strerror or exc}); {_EXPECTED}") from None
    if stat.S_ISREG(lst.st_mode):
        return lst
    if not stat.S_ISLNK(lst.st_mode):
        raise _fail(what, p, f"is {_kind(lst.st_mode)}; {_EXPECTED}")
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return None  # a dangling link: replaced like a new path
    except OSError as exc:
        raise _fail(what, p, f"a link that cannot be followed ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise _fail(what, p, f"is a symbolic link to {_kind(st.st_mode)}; {_EXPECTED}")
    return st


def _check_inputs(
    p: Path, inputs: Iterable[str | os.PathLike[str]], what: str, noun: str = "file"
) -> None:
    target = os.path.realpath(p)
    for inp in inputs:
        same = os.path.realpath(inp) == target
        if not same:
            with contextlib.suppress(OSError):
                same = os.path.samefile(p, inp)
        if same:
            raise _fail(
                what, p, f"is one of this command's inputs ({_show(inp)}); choose another {noun}"
            )


def check_target(
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    what: str = "output",
    make_parents: bool = False,
) -> Path:
    """Check that ``path`` may be written (see the module docstring); returns it as a Path.

    ``make_parents``: missing parent folders are allowed (``write_output`` creates them).
    Nothing is created or opened here, so a command may check its output before its work.
    """
    p = _check_name(os.fspath(path), what)
    _check_kernel_fs(p, what)
    _check_folder(p.parent, p, what, missing_ok=make_parents)
    _check_kind(p, what)
    _check_inputs(p, inputs, what)
    return p


def write_output(
    path: str | os.PathLike[str],
    content: Content,
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    what: str = "output",
    make_parents: bool = False,
) -> Path:
    """Write ``content`` (text as UTF-8, bytes, or a callback given the binary file object) to
    ``path`` atomically after :func:`check_target`; returns the path.

    ``inputs`` are the files the command reads (refused as targets); ``what`` names the output
    in messages (``"--output"``, ``"report"``, ...); ``make_parents`` creates missing folders.
    """
    p = check_target(path, inputs=inputs, what=what, make_parents=make_parents)
    if make_parents:
        _make_folder(p.parent, p, what)
    try:
        atomic_write(p, content, existing=lambda q: _check_kind(q, what))
    except NoTemporaryFile as exc:
        raise _fail(what, p, f"cannot write in {p.parent} ({exc.strerror or exc})") from None
    except OSError as exc:
        raise _fail(what, p, f"cannot write it ({_reason(exc)})") from None
    return p


class NoTemporaryFile(OSError):
    """The temporary file beside the target could not be created (nothing was written)."""


def _existing_file(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def atomic_write(
    path: str | os.PathLike[str],
    content: Content,
    *,
    existing: Callable[[Path], os.stat_result | None] = _existing_file,
) -> None:
    """The one atomic write of the project: ``content`` (text as UTF-8, bytes, or a callback
    given the binary file object) goes to a unique temporary file beside ``path``, is flushed
    to disk and renamed over ``path``, so a reader sees the old file or the new one, never half
    of one. The new file keeps the old one's permissions (``existing(path)``, called just
    before the rename, gives the old file's stat or None, and may raise to refuse the target).

    Raises ``OSError`` (:class:`NoTemporaryFile` when the temporary file cannot be created),
    leaving no temporary file behind; it checks nothing else: :func:`write_output` is the
    checked writer of a command's outputs, this is what it and the other writers (the
    population file, plugins' tables and caches) share.
    """
    p = Path(path)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{p.name[:80]}.", suffix=".tmp", dir=p.parent)
    except OSError as exc:
        raise NoTemporaryFile(exc.errno, exc.strerror) from None
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(content, str):
                fh.write(content.encode("utf-8"))
            elif isinstance(content, bytes):
                fh.write(content)
            else:
                content(fh)
            fh.flush()
            os.fsync(fh.fileno())
        old = existing(p)  # again, just before the rename
        os.chmod(tmp, stat.S_IMODE(old.st_mode) if old is not None else NEW_FILE_MODE)
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def store_quietly(path: str | os.PathLike[str], content: Content) -> None:
    """:func:`atomic_write` for a cache file that can be derived again (a memo, a converted
    graph): missing folders are made, and a failure (a read-only or full cache) is ignored, as
    it only costs the work again next time."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(p, content)
    except OSError:
        pass


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    return str(exc.strerror or exc)


def check_output_dir(
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    what: str = "--output",
) -> Path:
    """Check that ``path`` may be a command's output folder (nothing is created): a folder or
    a new path, not under /proc or /sys, no file among its parents, not one of ``inputs``."""
    raw = os.fspath(path)
    if not raw.strip():
        raise _fail(what, raw, "an empty path; expected a folder")
    if "\x00" in raw:
        raise _fail(what, raw, "contains a NUL character; expected a folder")
    p = Path(raw)
    longest = max(len(os.fsencode(part)) for part in p.parts)
    if longest > NAME_MAX:
        raise _fail(
            what, p, f"a folder name is {longest} bytes long; expected at most {NAME_MAX} bytes"
        )
    for candidate in (os.path.abspath(p), os.path.realpath(p)):
        root = _under_kernel_fs(candidate)
        if root is not None:
            raise _fail(what, p, f"is under {root} (a kernel file system); expected a folder")
    _check_inputs(p, inputs, what, "folder")
    try:
        st = os.stat(p)
    except (FileNotFoundError, NotADirectoryError):
        _check_folder(p, p, what, missing_ok=True)
        return p
    except OSError as exc:
        raise _fail(what, p, f"cannot use it ({exc.strerror or exc}); expected a folder") from None
    if not stat.S_ISDIR(st.st_mode):
        raise _fail(what, p, f"is {_kind(st.st_mode)}; expected a folder")
    return p


def output_dir(
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    what: str = "--output",
) -> Path:
    """:func:`check_output_dir`, then create the folder (and its parents) when missing."""
    p = check_output_dir(path, inputs=inputs, what=what)
    _make_folder(p, p, what)
    return p


def csv_cell(value: str) -> str:
    """``value`` made safe for a spreadsheet: a leading apostrophe before a formula start."""
    if value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value
