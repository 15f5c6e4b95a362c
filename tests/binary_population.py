"""One population run shared by the tests that read it (issue 32, item 9): the 32 binary Big
Five personas (``psym population build --generate binary``) x BFI-44, answered by a loopback
model that says "5" to every item for an extroverted persona and "1" otherwise. Made once per
test process (in the session's temporary folder) and only read by its users: tests that need
another population or other answers make their own run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.latency_server import LatencyServer  # noqa: E402

__all__ = ["LatencyServer", "by_extraversion", "binary_bfi_run"]

_MADE: dict[str, tuple[Path, str]] = {}


def by_extraversion(messages: list[dict[str, str]]) -> str:
    """The loopback model: "5" to every item for an extroverted persona, "1" otherwise (the
    reverse-keyed items, keyed back, run against the others: acquiescence)."""
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    return "5" if "extroverted" in system else "1"


def binary_bfi_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The run folder and the ``psym eval`` screen (200 columns wide) of the shared run; the
    population file is ``big5.jsonl`` beside the run folder."""
    if "run" not in _MADE:
        root = tmp_path_factory.mktemp("binary-bfi")
        pop, run = root / "big5.jsonl", root / "run"
        argv = ["population", "build", "--generate", "binary", "-o", str(pop)]
        res = CliRunner().invoke(cli, argv)
        assert res.exit_code == 0, res.output
        with LatencyServer(latency=0.0, answer=by_extraversion) as srv:
            url = f"base_url={srv.base_url},model=m"
            args = ["eval", "--tasks", "bfi", "--population", str(pop), "--model", "openai-chat"]
            res = CliRunner().invoke(
                cli, [*args, "--model-args", url, "-o", str(run)], terminal_width=200
            )
        assert res.exit_code == 0, res.output
        _MADE["run"] = (run, res.output)
    return _MADE["run"]
