"""The command output on the paper pages (``docs/papers/*.md``), generated from real runs.

A page marks the commands to run and the blocks their output fills::

    <!-- paper-run -->
    ```bash
    psym eval --tasks 16p --limit 6 --output rao
    ```

    <!-- paper-output: cmd=1 from="┏" -->
    ```text
    (what the command printed: written by this tool, never by hand)
    ```

Every ``paper-run`` block of a page runs, in page order, in one fresh directory with a fresh
response cache (the converted model copies are shared, so no run is served from the cache), on
the default model unless the command names another (``$BASE_URL`` is a loopback
OpenAI-compatible server, ``benchmarks/latency_server.py``, started only when a command uses
it). Each ``paper-output`` block below a run is that run's output, selected by its options:

- ``cmd=N``: only the N-th command of the run (1-based; default: every command, in order);
- ``from=TEXT`` / ``to=TEXT``: from the first line containing TEXT / up to and including the
  first later line containing TEXT;
- ``drop=TEXT``: leave out every line containing TEXT (repeatable);
- ``sample=PATH#N``: instead of printed output, the rendered prompt of record N (1-based) of the
  samples file PATH that the run wrote.

Only what is deterministic is compared: the run directory's path becomes ``.``, and timings,
dates and ``plan`` hashes are masked. Regenerate every page after a change of the screen::

    python tools/paper_outputs.py --write            # all pages (slow: real model runs)
    python tools/paper_outputs.py --write rao-2023   # one page
    python tools/paper_outputs.py                    # check only: exit 1 and a diff on drift
    python tools/paper_outputs.py --keep /tmp/runs   # keep the run directories (samples, ...)

``tests/project/test_paper_outputs.py`` reruns every page and fails on any difference; the docs
build (``tools/docs_hooks.py``) fails on an output block of a paper page that this tool does not
generate.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "docs" / "papers"
# a marker comment, then a fenced block (its language, its body)
BLOCK = re.compile(
    r"^<!-- paper-(run|output)(?::[ \t]*(.*?))?[ \t]*-->\n```(\w*)\n(.*?)^```[ \t]*$", re.S | re.M
)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```[ \t]*$", re.S | re.M)
MASKS = (
    (re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (re.compile(r"\bplan [0-9a-f]{12}\b"), "plan <hash>"),
    (re.compile(r"\b\d+:\d\d:\d\d\b"), "<elapsed>"),
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:s|ms|seconds)\b(?= |$|\)|,|;)", re.M), "<t> s"),
)
# lines that depend on the machine, not on the run: loading (or first preparing) the model, and
# progress bars (transient on a terminal)
ONCE = ("psym: preparing ", "psym: loading ", "Converting and de-quantizing")
PROGRESS = re.compile(r"^[^┏┡┃│└]*━━━.* \d+/\d+\b")
TIMEOUT_S = 1800


@dataclass
class Output:
    """A ``paper-output`` block: its options and where its body is in the page."""

    options: dict[str, list[str]]
    start: int
    end: int


@dataclass
class Run:
    """A ``paper-run`` block: its commands and the output blocks below it."""

    commands: list[str]
    outputs: list[Output] = field(default_factory=list)


def parse(text: str) -> list[Run]:
    """The runs of a page, each with its output blocks; an output before any run is an error."""
    runs: list[Run] = []
    for m in BLOCK.finditer(text):
        kind, opts, body = m.group(1), m.group(2) or "", m.group(4)
        if kind == "run":
            runs.append(Run(commands(body)))
        elif not runs:
            raise ValueError(f"paper-output at offset {m.start()} has no paper-run above it")
        else:
            runs[-1].outputs.append(Output(options(opts), m.start(4), m.end(4)))
    return runs


def commands(block: str) -> list[str]:
    """A bash block's command lines: continuations joined, ``  # comments`` and blanks dropped."""
    out = []
    for line in re.sub(r"\\\n[ \t]*", " ", block).splitlines():
        line = line.split("  #")[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def options(text: str) -> dict[str, list[str]]:
    """``key=value`` pairs of a marker (shell quoting), each key with all its values."""
    out: dict[str, list[str]] = {}
    for word in shlex.split(text):
        key, sep, value = word.partition("=")
        if not sep or key not in ("cmd", "from", "to", "drop", "sample"):
            raise ValueError(
                f"paper-output option {word!r}: expected cmd=, from=, to=, drop= or sample="
            )
        out.setdefault(key, []).append(value)
    return out


def unmarked_outputs(text: str) -> list[str]:
    """Fenced blocks of a page that show output (not ``bash``/``python``) without a marker."""
    marked = {m.start(3) - 3 for m in BLOCK.finditer(text) if m.group(1) == "output"}
    return [
        m.group(2).splitlines()[0] if m.group(2).strip() else "(empty block)"
        for m in FENCE.finditer(text)
        if m.group(1) not in ("bash", "python", "console", "yaml", "json", "csv")
        and m.start() not in marked
    ]


def mask(text: str, workdir: Path) -> str:
    """What of a run's output is deterministic: paths, times and hashes masked, no trailing
    blanks."""
    text = text.replace(str(workdir) + os.sep, "").replace(str(workdir), ".")
    lines = text.splitlines()
    text = "\n".join(x for x in lines if not x.startswith(ONCE) and not PROGRESS.match(x))
    for pattern, repl in MASKS:
        text = pattern.sub(repl, text)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def select(printed: list[str], opts: dict[str, list[str]], workdir: Path) -> str:
    """The text of one output block from the run's printed outputs (one per command)."""
    if "sample" in opts:
        return _sample(workdir, opts["sample"][0])
    if "cmd" in opts:
        n = opts["cmd"][0]
        if not n.isdigit() or not 1 <= int(n) <= len(printed):
            raise ValueError(f"cmd={n}: the run has commands 1 to {len(printed)}")
        printed = [printed[int(n) - 1]]
    lines = mask("\n".join(x.rstrip("\n") for x in printed), workdir).splitlines()
    if "from" in opts:
        lines = _from(lines, opts["from"][0])
    if "to" in opts:
        lines = _to(lines, opts["to"][0])
    drops = opts.get("drop", [])
    return "\n".join(x for x in lines if not any(d in x for d in drops))


def _sample(workdir: Path, spec: str) -> str:
    """``PATH#N``: the rendered prompt of record N (1-based) of a samples file of the run."""
    path, _, n = spec.partition("#")
    lines = (workdir / path).read_text(encoding="utf-8").splitlines()
    if not (n or "1").isdigit() or not 1 <= int(n or 1) <= len(lines):
        raise ValueError(f"sample={spec}: {path} has records 1 to {len(lines)}")
    record = json.loads(lines[int(n or 1) - 1])
    if not isinstance(record, dict) or not isinstance(record.get("rendered_prompt"), str):
        raise ValueError(f"sample={spec}: the record has no rendered_prompt")
    return str(record["rendered_prompt"]).strip("\n")


def _from(lines: list[str], text: str) -> list[str]:
    for i, line in enumerate(lines):
        if text in line:
            return lines[i:]
    raise ValueError(f"from={text!r}: no printed line contains it")


def _to(lines: list[str], text: str) -> list[str]:
    for i, line in enumerate(lines):
        if text in line:
            return lines[: i + 1]
    raise ValueError(f"to={text!r}: no printed line contains it")


@contextlib.contextmanager
def environment(workdir: Path, need_server: bool) -> Iterator[dict[str, str]]:
    """The environment of a page's runs: 80 columns, unbuffered, a fresh response cache sharing
    the converted model copies, this Python's ``psym`` first on PATH, ``$BASE_URL`` if needed."""
    sys.path.insert(0, str(REPO))
    from psymetrics_core.base.paths import models_dir

    cache = workdir.parent / (workdir.name + "-cache")
    cache.mkdir(exist_ok=True)
    models = models_dir()
    models.mkdir(parents=True, exist_ok=True)
    if not (cache / "models").exists():
        (cache / "models").symlink_to(models, target_is_directory=True)
    env = {
        **os.environ,
        "COLUMNS": "80",
        "LINES": "50",
        "PYTHONUNBUFFERED": "1",
        "PSYM_CACHE_DIR": str(cache),
        "NO_COLOR": "1",
        "TERM": "dumb",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    if not need_server:
        yield env
        return
    from benchmarks.latency_server import LatencyServer

    with LatencyServer(latency=0.0) as srv:
        yield {**env, "BASE_URL": srv.base_url}


def run_command(line: str, workdir: Path, env: dict[str, str]) -> str:
    """Run one command line as written (``$VAR`` from ``env``); its stdout and stderr together."""
    argv = [
        re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), m.group(0)), a) for a in shlex.split(line)
    ]
    proc = subprocess.run(
        argv,
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"`{line}` exited {proc.returncode}:\n{proc.stdout[-3000:]}")
    return proc.stdout


def regenerate(page: Path, workdir: Path, log: bool = False) -> str:
    """The page's text with every output block replaced by what its run prints now."""
    text = page.read_text(encoding="utf-8")
    runs = parse(text)
    need_server = any("$BASE_URL" in c for r in runs for c in r.commands)
    pieces: list[tuple[int, int, str]] = []
    with environment(workdir, need_server) as env:
        for run in runs:
            printed = []
            for line in run.commands:
                t0 = time.monotonic()
                printed.append(run_command(line, workdir, env))
                if log:
                    print(f"  {time.monotonic() - t0:6.1f} s  {line}", file=sys.stderr)
            for out in run.outputs:
                pieces.append((out.start, out.end, select(printed, out.options, workdir) + "\n"))
    for start, end, body in sorted(pieces, reverse=True):
        text = text[:start] + body + text[end:]
    return text


def pages(names: list[str]) -> list[Path]:
    """The paper pages with runs (all, or those named by file stem)."""
    found = [p for p in sorted(PAGES.glob("*.md")) if parse(p.read_text(encoding="utf-8"))]
    if not names:
        return found
    unknown = sorted(set(names) - {p.stem for p in found})
    if unknown:
        raise SystemExit(
            f"paper_outputs: no page with runs named {', '.join(unknown)} "
            f"(pages: {', '.join(p.stem for p in found)})"
        )
    return [p for p in found if p.stem in names]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="*", help="page names (file stems); default: every page")
    ap.add_argument("--write", action="store_true", help="rewrite the pages (default: check)")
    ap.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="run each page in DIR/PAGE and keep what the runs wrote (to read the "
        "samples while writing a page's prose); default: a temporary directory",
    )
    args = ap.parse_args(argv)
    bad = 0
    for page in pages(args.pages):
        bad += not check_page(page, write=args.write, keep=args.keep)
    return 1 if bad else 0


def check_page(page: Path, write: bool, keep: Path | None = None) -> bool:
    """Regenerate one page; write it (``write``) or print the diff. True when nothing is wrong."""
    name, t0 = page.relative_to(REPO), time.monotonic()
    print(f"{name}: running", file=sys.stderr)
    try:
        with tempfile.TemporaryDirectory(prefix=f"paper-{page.stem}-") as tmp:
            workdir = (keep.resolve() if keep else Path(tmp)) / page.stem
            workdir.mkdir(parents=True, exist_ok=False)
            new = regenerate(page, workdir, log=True)
    except (RuntimeError, ValueError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return False
    old = page.read_text(encoding="utf-8")
    took = f"{time.monotonic() - t0:.0f} s"
    if new == old:
        print(f"{name}: up to date ({took})", file=sys.stderr)
        return True
    if write:
        page.write_text(new, encoding="utf-8")
        print(f"{name}: rewritten ({took})", file=sys.stderr)
        return True
    diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True), str(name), "now")
    sys.stdout.writelines(diff)
    print(
        f"{name}: drifted ({took}); `python tools/paper_outputs.py --write {page.stem}`",
        file=sys.stderr,
    )
    return False


if __name__ == "__main__":
    raise SystemExit(main())
