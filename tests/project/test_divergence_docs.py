"""The worked example of docs/guides/divergence.md prints what the page shows (issue 33).

The ``bash`` blocks of the section "Worked example: Song et al. (2025)" run line by line, as a
reader would run them from the repository root, in a scratch directory that sees the
repository's ``tests/data/song2025`` (Song et al.'s published results, CC BY 4.0); every line of
the ``text`` block must be a line the commands printed. A change to the import, the profile
rule or the divergence statistics that changes the printed numbers fails here until the page is
updated. Cheap: imports only, no model.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from psym_inprocess import psym_main

from psymetrics_core.pluginsys.session import Session

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "guides" / "divergence.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
TITLE = "\n## Worked example: Song et al. (2025), Qwen2.5-7B-Instruct\n"


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert TITLE in text, "the page lost its worked example"
    return text.split(TITLE, 1)[1].split("\n## ", 1)[0]


def test_worked_example_prints_what_the_page_shows(tmp_path: Path) -> None:
    (tmp_path / "tests" / "data").mkdir(parents=True)
    (tmp_path / "tests" / "data" / "song2025").symlink_to(REPO / "tests" / "data" / "song2025")
    blocks = FENCE.findall(_section())
    commands = [ln for k, b in blocks if k == "bash" for ln in b.splitlines() if ln.strip()]
    claimed = [ln.rstrip() for k, b in blocks if k == "text" for ln in b.splitlines()]
    assert len(commands) >= 5 and any("import logprobs" in c for c in commands)
    assert len([c for c in claimed if c.strip()]) >= 3
    env = {"PSYM_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "200"}
    printed = []
    for line in commands:
        argv = shlex.split(line)
        assert argv[0] == "psym", f"the worked example runs psym only: {line}"
        ran = psym_main(argv[1:], env=env, cwd=tmp_path, session=Session(), merged=True)
        assert ran.returncode == 0, f"{line}\n{ran.stdout[-2000:]}"
        printed += [x.rstrip() for x in ran.stdout.splitlines()]
    missing = [x for x in claimed if x.strip() and x not in printed]
    assert not missing, f"the page shows lines the commands did not print: {missing}"
