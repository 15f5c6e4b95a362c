"""Helpers shared by the instrument plugins' key tests: score through the library AND the CLI."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

Responses = Mapping[str, Mapping[str, Any]]


def write_long_csv(path: Path, responses: Responses) -> Path:
    """Write {respondent: {item: value}} as the long ``respondent,item,response`` CSV."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["respondent", "item", "response"])
        for who, answers in responses.items():
            for item, value in answers.items():
                w.writerow([who, item, "" if value is None else value])
    return path


@pytest.fixture(scope="session")
def installed_session() -> Any:
    """One session of the installed plugins for the key tests (building one loads every
    plugin: a third of a second each time)."""
    from psymetrics_core.api import Session

    return Session()


@pytest.fixture
def check_key(
    tmp_path: Path, installed_session: Any, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[dict, dict]]:
    """``check_key(task, responses, expected, form)`` scores ``responses`` through the library
    (``psymetrics_core.score_responses``) and the CLI (``psym score --json``, through
    ``psymetrics_core.cli.main`` in this process: the console script's own process is tested by
    the plugin-hook and package-index tests), asserts both equal ``expected`` ({respondent:
    {scale: score}}, to 1e-9) and returns both.
    """

    def run(
        task: str, responses: Responses, expected: Responses, form: str = "original"
    ) -> tuple[dict, dict]:
        from psymetrics_core import score_responses
        from psymetrics_core.cli import main

        path = write_long_csv(tmp_path / f"{task}_{form}.csv", responses)
        lib = {
            who: {s: v["score"] for s, v in scales.items()}
            for who, scales in score_responses(task, path, form, session=installed_session).items()
        }
        argv = ["score", "--task", task, "--responses", str(path), "--form", form, "--json"]
        capsys.readouterr()
        try:
            main(argv, session=installed_session)
        except SystemExit as stop:
            assert not stop.code, capsys.readouterr().err
        cli = json.loads(capsys.readouterr().out)[task]
        for name, got in (("library", lib), ("cli", cli)):
            for who, scales in expected.items():
                for scale, value in scales.items():
                    assert got[who][scale] == pytest.approx(value, abs=1e-9), (name, who, scale)
        return lib, cli

    return run
