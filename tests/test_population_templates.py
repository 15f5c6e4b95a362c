"""Every built-in persona template renders for every kind of population (issue 25 newcomer
trial: ``genpt`` failed on every population without a ``name`` label)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from psymetrics_core.administer.population import TEMPLATES, respondent_conditions
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
    rows = [{"id": "r1", "persona": "a nurse", "labels": {"name": "Ada"}},
            {"id": "r2", "persona": "a chef"}]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = (c.messages([])[0]["content"] for c in respondent_conditions(path, "genpt"))
    assert first.startswith("You are Ada. Based on") and second.startswith("You are r2. Based on")
