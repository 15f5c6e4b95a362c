"""The one output writer (``psymetrics_core.base.writing``): what it refuses, how it writes.

Every bad target is made inside ``tmp_path`` (a private FIFO, a socket, a folder, links); no
real device node is touched. ``/proc`` and ``/sys`` are only looked at: the writer must refuse
them before it opens anything there. Full disks and read-only file systems are reached through
a callback that fails the way the kernel does (``OSError`` with ``ENOSPC`` / ``EROFS``).
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.writing import (
    NEW_FILE_MODE,
    check_output_dir,
    check_target,
    csv_cell,
    output_dir,
    write_output,
)


def _one_line(exc: pytest.ExceptionInfo[PsymError]) -> str:
    msg = str(exc.value)
    assert msg and "\n" not in msg, msg
    return msg


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_writes_text_bytes_and_a_callback(tmp_path: Path) -> None:
    a = write_output(tmp_path / "a.txt", "héllo\n")
    b = write_output(tmp_path / "b.bin", b"\x00\x01")
    c = write_output(tmp_path / "c.txt", lambda fh: fh.write(b"from a callback"))
    assert a.read_text(encoding="utf-8") == "héllo\n"
    assert b.read_bytes() == b"\x00\x01"
    assert c.read_bytes() == b"from a callback"
    assert stat.S_IMODE(a.stat().st_mode) == NEW_FILE_MODE  # as open(..., "w") would make it
    assert _leftovers(tmp_path) == []


def test_replaces_a_regular_file_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old")
    target.chmod(0o640)
    write_output(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_link_to_a_regular_file_and_a_dangling_link_are_replaced(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("kept")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_output(link, "new")
    assert real.read_text() == "kept" and link.read_text() == "new" and not link.is_symlink()
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "nowhere")
    write_output(dangling, "x")
    assert dangling.read_text() == "x"


def _special_targets(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    to_fifo = tmp_path / "to-fifo"
    to_fifo.symlink_to(fifo)
    to_folder = tmp_path / "to-folder"
    to_folder.symlink_to(folder)
    return {
        "fifo": (fifo, "is a FIFO (named pipe); expected a regular file or a new path"),
        "folder": (folder, "is a folder; expected a regular file or a new path"),
        "link-to-fifo": (to_fifo, "is a symbolic link to a FIFO (named pipe)"),
        "link-to-folder": (to_folder, "is a symbolic link to a folder"),
    }


@pytest.mark.parametrize("kind", ["fifo", "folder", "link-to-fifo", "link-to-folder"])
def test_special_targets_are_refused_and_left_as_they_were(tmp_path: Path, kind: str) -> None:
    target, expected = _special_targets(tmp_path)[kind]
    before = os.lstat(target)
    with pytest.raises(PsymError) as exc:
        write_output(target, "x", what="report")
    msg = _one_line(exc)
    assert msg.startswith(f"report {target}: ") and expected in msg, msg
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert _leftovers(tmp_path) == []


def test_a_socket_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a short relative name: socket paths are limited to 107 bytes
    with socket.socket(socket.AF_UNIX) as s:
        s.bind("s.sock")
        with pytest.raises(PsymError, match=r"s\.sock: is a socket; expected a regular file"):
            write_output("s.sock", "x")
        assert stat.S_ISSOCK(os.lstat("s.sock").st_mode)


@pytest.mark.parametrize(
    "target, expected",
    [
        ("/proc/self/psym-output.html", "is under /proc (a kernel file system)"),
        ("/proc/self/environ", "is under /proc (a kernel file system)"),
        ("/sys/psym-output.csv", "is under /sys (a kernel file system)"),
        ("/proc/self/cwd/../psym-out.csv", "is under /proc"),
    ],
)
def test_kernel_file_systems_are_refused_before_opening(target: str, expected: str) -> None:
    with pytest.raises(PsymError) as exc:
        check_target(target)
    assert expected in _one_line(exc)
    with pytest.raises(PsymError, match="kernel file system"):
        write_output(target, "x")


def test_a_link_into_proc_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "env"
    link.symlink_to("/proc/self/environ")
    with pytest.raises(PsymError, match="is under /proc"):
        write_output(link, "x")
    assert link.is_symlink()


def test_names_that_cannot_be_files(tmp_path: Path) -> None:
    cases = {
        "": "'': an empty path; expected a file name",
        "  ": "'  ': an empty path",
        str(tmp_path / ("x" * 300)): "the file name is 300 bytes long; expected at most 255",
        str(tmp_path) + "/": "names a folder; expected a file name",
        str(tmp_path / "a\x00b"): "contains a NUL character",
    }
    for target, expected in cases.items():
        with pytest.raises(PsymError) as exc:
            write_output(target, "x")
        assert expected in _one_line(exc), (target, str(exc.value))
        assert len(str(exc.value)) < 300  # a very long path is shortened in the message


def test_parents(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(PsymError) as exc:
        write_output(afile / "out.html", "x")
    assert f"{afile} is a file, not a folder" in _one_line(exc)
    with pytest.raises(PsymError, match=f"{afile} is a file, not a folder"):
        write_output(afile / "deeper" / "out.html", "x", make_parents=True)
    missing = tmp_path / "missing" / "out.html"
    with pytest.raises(PsymError, match="the folder .*missing does not exist; create it first"):
        write_output(missing, "x")
    check_target(missing, make_parents=True)  # a check creates nothing
    assert not missing.parent.exists()
    write_output(missing, "x", make_parents=True)
    assert missing.read_text() == "x"


def test_the_commands_own_inputs_are_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    results = run / "results.json"
    results.write_text('{"tasks": {}}')
    hard = tmp_path / "hard.json"
    os.link(results, hard)
    soft = tmp_path / "soft.json"
    soft.symlink_to(results)
    for target in (results, hard, soft, tmp_path / "run" / ".." / "run" / "results.json"):
        with pytest.raises(PsymError) as exc:
            write_output(target, "<html>", inputs=[results], what="--output")
        msg = _one_line(exc)
        assert f"is one of this command's inputs ({results}); choose another file" in msg, msg
    assert results.read_text() == '{"tasks": {}}'
    with pytest.raises(PsymError, match="inputs"):  # an input that does not exist yet
        write_output(run / "samples.jsonl", "x", inputs=[run / "samples.jsonl"])
    assert not (run / "samples.jsonl").exists()


def _fail_with(code: int):  # noqa: ANN202 -- a callback for write_output
    def write(fh: IO[bytes]) -> None:
        fh.write(b"partial")
        raise OSError(code, os.strerror(code))

    return write


@pytest.mark.parametrize(
    "code, expected",
    [
        (errno.ENOSPC, "cannot write it (no space left on the device)"),
        (errno.EROFS, "cannot write it (the file system is read-only)"),
        (errno.EACCES, "cannot write it (Permission denied)"),
    ],
)
def test_write_failures_are_one_line_and_leave_the_old_file(
    tmp_path: Path, code: int, expected: str
) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old")
    with pytest.raises(PsymError) as exc:
        write_output(target, _fail_with(code), what="--output")
    assert _one_line(exc) == f"--output {target}: {expected}"
    assert target.read_text() == "old" and _leftovers(tmp_path) == []


def test_other_errors_of_a_callback_pass_through_and_clean_up(tmp_path: Path) -> None:
    def boom(fh: IO[bytes]) -> None:
        fh.write(b"x")
        raise PsymError("the table could not be built")

    with pytest.raises(PsymError, match="the table could not be built"):
        write_output(tmp_path / "t.csv", boom)
    assert list(tmp_path.iterdir()) == []


_WRITER = """
import sys
from psymetrics_core.base.writing import write_output
target, mark = sys.argv[1], sys.argv[2]
for _ in range(20):
    write_output(target, (mark * 200_000) + "\\n")
"""


def test_concurrent_writers_never_collide(tmp_path: Path) -> None:
    """Three processes writing one file 20 times each: every write succeeds, the file ends
    as one writer's whole content and no temporary file is left."""
    target = tmp_path / "out.txt"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(target), mark], stderr=subprocess.PIPE, text=True
        )
        for mark in "abc"
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    text = target.read_text()
    assert text in {m * 200_000 + "\n" for m in "abc"}
    assert _leftovers(tmp_path) == [] and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_output_dir(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    bad = {
        "": "an empty path; expected a folder",
        str(afile): "is a file; expected a folder",
        str(fifo): "is a FIFO (named pipe); expected a folder",
        str(afile / "sub"): f"{afile} is a file, not a folder",
        "/proc/self/psym-out": "is under /proc",
        "/sys/psym-out": "is under /sys",
        str(tmp_path / ("d" * 300)): "a folder name is 300 bytes long; expected at most 255",
    }
    for target, expected in bad.items():
        with pytest.raises(PsymError) as exc:
            output_dir(target, what="--output")
        msg = _one_line(exc)
        assert msg.startswith("--output ") and expected in msg, (target, msg)
    new = tmp_path / "a" / "b"
    assert check_output_dir(new) == new and not new.exists()  # a check creates nothing
    assert output_dir(new) == new and new.is_dir()
    assert output_dir(new) == new  # an existing folder is fine


@pytest.mark.parametrize(
    "cell, safe",
    [
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("-", "'-"),
        ("-1\n", "'-1\n"),  # not a plain number
        ("-1.5", "-1.5"),
        ("+3", "+3"),
        ("-1e5", "-1e5"),
        ("-.5", "-.5"),
        ("1-2", "1-2"),
        ("plain text = fine", "plain text = fine"),
        ("", ""),
    ],
)
def test_csv_cell(cell: str, safe: str) -> None:
    """The OWASP CSV-injection rule (owasp.org/www-community/attacks/CSV_Injection): a cell
    starting with = + - @ tab or CR is prefixed with ', a plain number is left alone."""
    assert csv_cell(cell) == safe
