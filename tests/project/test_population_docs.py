"""The "Worked examples" of docs/guides/populations.md print what the page shows (issue 25).

Every fenced block of that section runs in order in one directory, as a reader would run them,
against the loopback server the docs test uses (``benchmarks/latency_server.py``, answers from a
hash of the prompt): the ``bash`` blocks line by line (``$BASE_URL`` substituted), a
``python`` block (if any) as ``two_factor.py``. Each ``text`` block is the output the page
claims: every line of it that is not ``...`` must be a line the commands printed (plan hashes
aside, which depend on the directory). So a change to the statistics, the persona file or the
commands that changes the printed numbers fails here until the page is updated.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from psym_inprocess import psym_main

from psymetrics_core.pluginsys.session import Session

pytestmark = (
    pytest.mark.integration
)  # the page's worked examples against real output: make test-integration

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "guides" / "populations.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
HASH = re.compile(r"\bplan [0-9a-f]{12}\b")

pytest.importorskip("semopy")


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert "\n## Worked examples\n" in text, "the page lost its Worked examples section"
    return text.split("\n## Worked examples\n", 1)[1].split("\n## ", 1)[0]


def _run_bash(block: str, cwd: Path, env: dict[str, str]) -> str:
    """Each line of ``block`` as written, in ``cwd`` with ``env``: what it printed (stdout and
    stderr). A ``psym`` line runs ``psymetrics_core.cli.main`` in this process, as the console
    script does (the console script itself is run by test_docs' runnable blocks), so the suite
    does not start Python and import the analyses again for every line; other lines are
    processes."""
    out = []
    for line in block.splitlines():
        line = line.split("  #")[0].strip()
        if not line:
            continue
        argv = [
            re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), m.group(0)), a)
            for a in shlex.split(line)
        ]
        if argv[0] == "psym":
            code, printed = _psym_here(argv[1:], cwd, env)
            assert code == 0, f"{line}\n{printed[-2000:]}"
            out.append(printed)
            continue
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{line}\n{proc.stderr[-2000:]}"
        out.append(proc.stdout + proc.stderr)
    return "\n".join(out)


def _psym_here(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """``psym ARGS`` in this process, in ``cwd`` with ``env`` as its environment (restored
    after): its exit status and what it printed on stdout and stderr, as one text."""
    ran = psym_main(args, env=env, cwd=cwd, session=Session(), replace_env=True, merged=True)
    return ran.returncode, ran.stdout


def test_worked_examples_print_what_the_page_shows(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO))
    from benchmarks.latency_server import LatencyServer

    blocks = FENCE.findall(_section())
    kinds = [k for k, _ in blocks]
    assert kinds.count("bash") >= 4 and kinds.count("text") >= 4
    bin_dir = str(Path(sys.executable).parent)
    printed: list[str] = []
    claimed: list[str] = []
    with LatencyServer(latency=0.0) as srv:
        env = {
            **os.environ,
            "BASE_URL": srv.base_url,
            "PSYM_CACHE_DIR": str(tmp_path / "cache"),
            "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}",
        }
        for kind, body in blocks:
            if kind == "bash":
                printed.append(_run_bash(body, tmp_path, env))
            elif kind == "python":
                (tmp_path / "two_factor.py").write_text(body)
                printed.append(_run_bash("python two_factor.py", tmp_path, env))
            elif kind == "text":
                claimed += [x.rstrip() for x in body.splitlines() if x.strip() not in ("", "...")]
    lines = {HASH.sub("plan #", x.rstrip()) for x in "\n".join(printed).splitlines()}
    missing = [x for x in claimed if HASH.sub("plan #", x) not in lines]
    assert not missing, f"the page shows lines the commands did not print: {missing}"
    # the sharded plan gave the single run's samples, line for line
    merged = (tmp_path / "asi-merged" / "samples.jsonl").read_bytes()
    assert merged == (tmp_path / "asi-population" / "samples.jsonl").read_bytes()
