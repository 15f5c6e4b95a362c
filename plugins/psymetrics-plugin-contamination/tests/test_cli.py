"""``psym contamination`` arrives through the ``register_commands`` hook (a real ``psym``
process), and bad input stops with one line naming what is wrong (``psym``'s own ``main`` in
this process: the same parsing and one-line rendering, without a Python start-up per case)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from psymetrics_core.cli import main


@dataclass
class Ran:
    """What one ``psym`` command line gave: exit status, stdout and stderr."""

    returncode: int
    stdout: str
    stderr: str


Psym = Callable[..., Ran]


@pytest.fixture
def psym(capsys: pytest.CaptureFixture[str]) -> Psym:
    """``psym(*args)``: the command line in this process (``psymetrics_core.cli.main``)."""

    def run(*args: str) -> Ran:
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return Ran(code, out.out, out.err)

    return run


def test_register_commands_hook_adds_the_command(psym: Psym) -> None:
    from psymetrics_core.api import Session

    impls = Session().hook.register_commands.get_hookimpls()
    assert "contamination" in {i.plugin_name for i in impls}
    top = psym("--help")
    assert top.returncode == 0 and "contamination" in top.stdout
    # the real console entry point, as a user runs it
    sub = subprocess.run(
        [sys.executable, "-m", "psymetrics_core", "contamination", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert sub.returncode == 0
    for flag in (
        "--tasks",
        "--probes",
        "--permutations",
        "--model-args",
        "--items",
        "--keywords",
        "--output",
        "--json",
    ):
        assert flag in sub.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--probes", "verbatim,telepathy"], "--probes: unknown probe telepathy"),
        (["--option", "target_mid_rule=median"], "--option target_mid_rule: expected one of"),
        (["--option", "nonsense=1"], "--option expects KEY=VALUE with KEY one of"),
        (["--permutations", "0"], "--permutations must be an integer in 1-10,000"),
    ],
)
def test_bad_options_are_one_line_errors(
    psym: Psym, args: list[str], message: str, tmp_path: Path
) -> None:
    res = psym("contamination", "--tasks", "bfi", "--output", str(tmp_path), *args)
    assert res.returncode != 0
    assert message in res.stderr
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_bad_keyword_file_names_file_and_line(psym: Psym, tmp_path: Path) -> None:
    bad = tmp_path / "kw.csv"
    bad.write_text("id,keyword\n1,talkative\n2,zebra\n")
    res = psym(
        "contamination",
        "--tasks",
        "bfi",
        "--probes",
        "keyword",
        "--keywords",
        str(bad),
        "--output",
        str(tmp_path / "out"),
    )
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert f"{bad}, row 3, field 'keyword': keyword 'zebra' does not occur" in res.stderr


def test_user_texts_needed_for_pvq40(psym: Psym, tmp_path: Path) -> None:
    res = psym("contamination", "--tasks", "pvq40", "--output", str(tmp_path))
    assert res.returncode != 0 and "--items pvq40=FILE.csv" in res.stderr
    assert "Traceback" not in res.stderr


def test_order_probe_on_a_chat_api_stops_before_any_call(psym: Psym, tmp_path: Path) -> None:
    # openai-chat cannot score a continuation's log-likelihood: one line, no request sent
    res = psym(
        "contamination",
        "--tasks",
        "bfi",
        "--probes",
        "verbatim,order",
        "--model",
        "openai-chat",
        "--model-args",
        "base_url=http://127.0.0.1:9/v1,model=m",
        "--output",
        str(tmp_path),
    )
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "cannot score a continuation's log-likelihood" in res.stderr
