"""Task names on the command line ignore case where one task matches, and an unknown name gets
the close matches, case ignored (issue 31: `--tasks MFQ` was refused with no suggestion)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.base.errors import UnknownTaskError
from psymetrics_core.cli import cli
from psymetrics_core.pluginsys.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from benchmarks.latency_server import LatencyServer  # noqa: E402


def test_a_name_differing_only_in_case_is_the_task() -> None:
    session = Session()
    assert session.task_id("MFQ") == "mfq"
    assert session.task_id("Pb-Gse") == "pb-gse"
    assert session.get_instrument("BFI").id == "bfi"


@pytest.mark.parametrize("name, close", [("MFQX", "mfq"), ("bfl", "bfi"), ("ASY", "asi")])
def test_an_unknown_name_gets_the_close_matches(name: str, close: str) -> None:
    with pytest.raises(UnknownTaskError) as err:
        Session().task_id(name)
    assert f"unknown task '{name}'; did you mean {close}" in str(err.value)


def test_eval_with_an_upper_case_name_records_the_task_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run (an OpenAI-compatible local server) is recorded under the task's own id."""
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "c"))
    with LatencyServer(latency=0.0) as srv:
        model_args = f"base_url={srv.base_url},model=stub"
        args = ["eval", "--tasks", "MFQ", "--limit", "2", "--model", "openai-chat"]
        args += ["--model-args", model_args, "-o", str(tmp_path / "r")]
        res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert list(results["tasks"]) == ["mfq"]


def test_eval_with_an_unknown_name_is_one_line_with_the_suggestion(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["eval", "--tasks", "BFIX", "-o", str(tmp_path / "r")])
    assert res.exit_code == 1
    assert "did you mean bfi" in str(res.exception)
    assert not (tmp_path / "r").exists()  # refused before the run directory is claimed
