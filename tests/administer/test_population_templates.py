"""Issue 25 newcomer trial: every built-in persona template renders for every kind of
population (``genpt`` failed on every population without a ``name`` label); ``psym population
build`` applies the population file's id rule, says how many duplicates it dropped, and refuses
``--levels`` where it means nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from psymetrics_core.administer.population import TEMPLATES, respondent_conditions
from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import cli
from psymetrics_core.study.population import BuildSpec, build_population, write_population


def _populations(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for kind in ("binary", "trait-markers"):
        out[kind] = tmp_path / f"{kind}.jsonl"
        write_population(out[kind], build_population(BuildSpec(generate=kind, n=3, seed=1)))
    out["file"] = tmp_path / "file.jsonl"  # a file of its own, no labels at all
    out["file"].write_text(json.dumps({"id": "r1", "persona": "a retired nurse."}) + "\n")
    return out


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_every_built_in_template_renders(tmp_path: Path, template: str) -> None:
    for kind, path in _populations(tmp_path).items():
        for cond in respondent_conditions(path, template):
            text = cond.messages([{"role": "user", "content": "item"}])[0]["content"]
            assert text.strip() and "{{" not in text, (kind, template)


def test_genpt_names_the_respondent(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    rows = [
        {"id": "r1", "persona": "a nurse", "labels": {"name": "Ada"}},
        {"id": "r2", "persona": "a chef"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = (c.messages([])[0]["content"] for c in respondent_conditions(path, "genpt"))
    assert first.startswith("You are Ada. Based on") and second.startswith("You are r2. Based on")


def _build(tmp_path: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["population", "build", *args, "-o", str(tmp_path / "p.jsonl")])


def test_build_applies_the_population_id_rule(tmp_path: Path) -> None:
    """An id that ``psym eval --population`` would refuse is refused by the build, naming the
    source file, row and the rule (one rule: records.population.id_problem)."""
    src = tmp_path / "src.jsonl"
    src.write_text(json.dumps({"id": "é/ü", "persona": "a chef"}) + "\n")
    res = _build(tmp_path, "--source", str(src))
    assert isinstance(res.exception, PsymError)  # (psym prints it as one line)
    assert str(res.exception) == (
        f"{src}, row 1: field 'id': respondent id 'é/ü': no line breaks, tabs or path "
        "separators (the id rule of population files)"
    )
    assert not (tmp_path / "p.jsonl").exists()


def test_build_says_what_it_dropped(tmp_path: Path) -> None:
    src = tmp_path / "src.jsonl"
    rows = [
        {"id": "a", "persona": "A chef"},
        {"id": "b", "persona": "a  chef"},
        {"id": "c", "persona": "a nurse"},
        {"id": "d", "persona": "a pilot"},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = _build(tmp_path, "--source", str(src))
    assert res.exit_code == 0, res.output
    assert f"wrote 3 respondents to {tmp_path / 'p.jsonl'} (1 duplicate persona dropped)" in (
        res.output
    )
    res = _build(tmp_path, "--source", str(src), "--n", "1")
    assert f"wrote 1 respondent to {tmp_path / 'p.jsonl'} (1 duplicate persona dropped)" in (
        res.output
    )
    res = _build(tmp_path, "--generate", "binary", "--levels", "1,5")
    assert isinstance(res.exception, PsymError)
    assert "--levels: only with --generate trait-markers" in str(res.exception)
    res = _build(tmp_path, "--generate", "trait-markers", "--levels", "1,5", "--n", "2")
    assert res.exit_code == 0 and res.output.startswith("wrote 2 respondents to"), res.output
    help_text = " ".join(_build(tmp_path, "--help").output.split())
    assert "[default: the row number]" not in help_text and "[default: id; a row without" in (
        help_text
    )
