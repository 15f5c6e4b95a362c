"""A population run's provenance lists the population file and a persona template file with
their full sha256 (issue 25 newcomer trial), and ``--condition persona=FILE`` beside
``--population`` is a warning line, not silence."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from click.testing import CliRunner

from psymetrics_core.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.latency_server import LatencyServer  # noqa: E402


def _eval(tmp_path: Path, *extra: str) -> str:
    pop = tmp_path / "pop.jsonl"
    rows = [{"id": "r1", "persona": "a 61-year-old chef"}, {"id": "r2", "persona": "a nurse"}]
    pop.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with LatencyServer(latency=0.0) as srv:
        args = [
            "eval",
            "--tasks",
            "bfi",
            "--limit",
            "2",
            "--population",
            str(pop),
            *extra,
            "--model",
            "openai-chat",
            "--model-args",
            f"base_url={srv.base_url},model=m",
            "-o",
            str(tmp_path / "run"),
        ]
        res = CliRunner().invoke(cli, args, terminal_width=300)
    assert res.exit_code == 0, res.output
    return res.output


def test_provenance_lists_the_population_and_template_files(tmp_path: Path) -> None:
    template = tmp_path / "persona.j2"
    template.write_text("Act as {{ persona }}.")
    _eval(tmp_path, "--persona-template", str(template))
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    files = {f["role"]: f for f in results["provenance"]["files"]}
    pop = tmp_path / "pop.jsonl"
    assert files["population"]["path"] == str(pop)
    assert files["population"]["sha256"] == hashlib.sha256(pop.read_bytes()).hexdigest()
    assert (
        files["persona template"]["sha256"] == hashlib.sha256(b"Act as {{ persona }}.").hexdigest()
    )
    assert files["persona template"]["bytes"] == template.stat().st_size


def test_built_in_template_is_no_file(tmp_path: Path) -> None:
    _eval(tmp_path)
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    roles = [f["role"] for f in results["provenance"]["files"]]
    assert "population" in roles and "persona template" not in roles


def test_persona_condition_with_population_warns(tmp_path: Path) -> None:
    pirate = tmp_path / "pirate.txt"
    pirate.write_text("You are a pirate.")
    out = _eval(tmp_path, "--condition", f"persona={pirate}")
    assert (
        f"warning: --condition persona={pirate} with --population: every respondent's system "
        "prompt gets both personas" in " ".join(out.split())
    )
    samples = (tmp_path / "run" / "samples.jsonl").read_text().splitlines()
    system = json.loads(samples[0])["prompt"]["messages"][0]["content"]
    assert system.startswith("You are a pirate.\n\nYou are a 61-year-old chef")  # (as warned)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert "warning" not in _eval(plain)  # no persona condition: no warning
