"""The ``psym`` console script runs the command line, then freezes the objects left out of the
garbage collector (a faster exit), whatever the command's outcome; in-process ``main()`` (as
tests and embedding code call it) does not freeze anything."""

from __future__ import annotations

import configparser
import gc
from pathlib import Path

import pytest

from psymetrics_core import cli

REPO = Path(__file__).resolve().parents[2]


def test_console_main_runs_main_then_freezes(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr("sys.argv", ["psym", "--version"])
    cli.console_main()
    assert frozen == [1]
    monkeypatch.setattr("sys.argv", ["psym", "show", "no-such-task"])
    with pytest.raises(SystemExit) as info:
        cli.console_main()
    assert info.value.code == 1 and frozen == [1, 1]  # frozen when the command fails too
    cli.main(["--version"])
    assert frozen == [1, 1]


def test_the_installed_script_and_python_m_use_console_main() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    scripts = cfg["options.entry_points"]["console_scripts"].strip().splitlines()
    assert "psym = psymetrics_core.cli:console_main" in scripts
    assert "console_main()" in (REPO / "psymetrics_core" / "__main__.py").read_text()
