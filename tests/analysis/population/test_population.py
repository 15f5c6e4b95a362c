"""Persona populations (issue 25): the builder (sources, dedupe, seeded and stratified samples,
generated profiles), administration to every respondent, and a population run end to end
against a loopback server whose answers depend on the persona."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from binary_population import binary_bfi_run
from click.testing import CliRunner

from psymetrics_core.administer.population import TEMPLATES, respondent_conditions
from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import cli
from psymetrics_core.records.population import read_population
from psymetrics_core.study.population import BuildSpec, build_population, write_population


def _source(tmp_path: Path, n: int = 40) -> Path:
    """A licence-clean persona source written for the test: region and age labels, one
    duplicate persona (differing only in case and spaces)."""
    rows = [
        {
            "id": f"p{i}",
            "persona": f"A person from town {i} who likes topic {i % 7}",
            "region": "north" if i % 4 == 0 else "south",
            "age": 20 + i,
        }
        for i in range(n)
    ]
    rows.append(
        {
            "id": "dup",
            "persona": "a person from  town 3 who likes topic 3",
            "region": "south",
            "age": 99,
        }
    )
    path = tmp_path / "personas.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_build_is_deterministic_and_deduplicated(tmp_path: Path) -> None:
    src = _source(tmp_path)
    spec = BuildSpec(source=src, n=12, seed=7, licence="CC0-1.0")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_population(a, build_population(spec))
    write_population(b, build_population(spec))
    assert a.read_bytes() == b.read_bytes()
    people = read_population(a)
    assert len(people) == 12 and "dup" not in {p.id for p in people}
    assert people[0].labels.keys() == {"region", "age"}
    assert people[0].source["sha256"] == __import__("hashlib").sha256(src.read_bytes()).hexdigest()
    assert people[0].licence == "CC0-1.0"
    other = build_population(BuildSpec(source=src, n=12, seed=8))
    assert [p.id for p in other] != [p.id for p in people]
    assert len(build_population(BuildSpec(source=src))) == 40  # all distinct personas


@pytest.mark.parametrize("n", [5, 9, 10, 13, 21])
def test_stratified_quotas_within_one(tmp_path: Path, n: int) -> None:
    people = build_population(
        BuildSpec(source=_source(tmp_path), n=n, seed=1, stratify=("region",))
    )
    counts = Counter(p.labels["region"] for p in people)
    # 10 of the 40 distinct personas are north: the exact target is n/4
    assert abs(counts["north"] - n * 10 / 40) <= 1 and abs(counts["south"] - n * 30 / 40) <= 1
    assert sum(counts.values()) == n


def test_sources_csv_txt_and_saved_dataset(tmp_path: Path) -> None:
    csv = tmp_path / "p.csv"
    csv.write_text("id,description,group\na,first persona,x\nb,second persona,y\n")
    assert [p.id for p in build_population(BuildSpec(source=csv))] == ["a", "b"]
    txt = tmp_path / "p.txt"
    txt.write_text("one persona\n\nanother persona\n")
    assert [p.persona for p in build_population(BuildSpec(source=txt))] == [
        "one persona",
        "another persona",
    ]
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_list([{"persona": "saved one", "id": 5}, {"persona": "saved two"}])
    ds.save_to_disk(str(tmp_path / "saved"))
    people = build_population(BuildSpec(source=tmp_path / "saved"))
    assert [p.id for p in people] == ["5", "saved-2"]


def test_generated_profiles_carry_labels() -> None:
    binary = build_population(BuildSpec(generate="binary"))
    assert len(binary) == 32
    assert Counter(p.labels["openness"] for p in binary) == {0: 16, 1: 16}
    markers = build_population(BuildSpec(generate="trait-markers", levels=(1, 5, 9)))
    assert len(markers) == 3**5
    extreme = next(p for p in markers if p.id == "tm-91519")
    assert "extremely extraverted" in extreme.persona and "extremely cold" in extreme.persona
    assert "neither" in extreme.persona  # level 5 of agreeableness... of conscientiousness
    assert extreme.labels == {
        "extraversion": 9,
        "agreeableness": 1,
        "conscientiousness": 5,
        "neuroticism": 1,
        "openness": 9,
    }


@pytest.mark.parametrize(
    ("spec", "expect"),
    [
        (BuildSpec(), "give either --source FILE or --generate KIND"),
        (BuildSpec(generate="binary", n=33), "only 32 distinct personas"),
        (BuildSpec(generate="trait-markers", levels=(0, 10)), "expected levels 1-9"),
        (BuildSpec(source=Path("/nonexistent/x.jsonl")), "no such persona source"),
    ],
)
def test_build_errors_are_one_line(spec: BuildSpec, expect: str) -> None:
    with pytest.raises(PsymError, match=expect):
        build_population(spec)


def test_templates_quote_the_seeds(tmp_path: Path) -> None:
    pop = tmp_path / "p.jsonl"
    write_population(pop, build_population(BuildSpec(generate="binary", n=2, seed=3)))
    conds = respondent_conditions(pop, "jung")
    msgs = conds[0].messages([{"role": "user", "content": "item"}])
    assert msgs[0]["content"].startswith("You are a character who is ")
    assert msgs[0]["content"].endswith(". Answer and behave accordingly.")
    assert ".." not in msgs[0]["content"]
    assert conds[0].facet == "respondent" and conds[0].info["labels"]
    assert set(TEMPLATES) >= {"jung", "serapio-garcia", "psychobench", "genpt"}
    bad = tmp_path / "t.j2"
    bad.write_text("{{ labels.nope }}")
    with pytest.raises(PsymError, match="respondent"):
        respondent_conditions(pop, str(bad))


def test_population_run_gives_the_built_in_criterion_validity(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The shared 32-persona run (``tests/binary_population.py``): "5" to every item for an
    extroverted persona, "1" otherwise."""
    run, _ = binary_bfi_run(tmp_path_factory)
    lines = [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]
    assert len(lines) == 32 * 44
    info = next(iter(lines[0]["condition_info"].values()))
    assert info["respondent"].startswith("bin-") and len(info["persona_sha256"]) == 16
    res = CliRunner().invoke(cli, ["analyze", str(run), "--json"])
    assert res.exit_code == 0, res.output
    sections = json.loads(res.output)["sections"]
    assert "projective" not in sections  # questionnaires alone are not GenPT's analysis
    pop_sec = sections["population"]["bfi"]
    crit = {r["scale"]: r for r in pop_sec["criterion"]}
    # extraversion: 8 items, 3 reverse-keyed: 3.5 (all 5s) vs 2.5 (all 1s): perfect separation
    assert crit["extraversion"]["statistic"] == "auc" and crit["extraversion"]["value"] == 1.0
    for other in ("agreeableness", "conscientiousness", "neuroticism", "openness"):
        assert crit[other]["value"] == pytest.approx(0.5)  # the 2^5 design is balanced
    assert pop_sec["n_respondents"] == 32 and pop_sec["n_personas"] == 32


def test_auc_of_tied_scores_says_why_there_is_no_interval() -> None:
    import numpy as np

    from psymetrics_core.analysis.population.criterion import auc

    c = auc(np.array([3.0, 3.0, 3.0, 3.0]), np.array([0.0, 1.0, 0.0, 1.0]))
    # every score tied: no AUC at all (issue 31: 0.50 read as "no better than chance")
    assert c.value is None and c.ci95 is None and "the scores never vary" in (c.reason or "")
    c = auc(np.array([3.0, 3.0, 4.0, 4.0, 3.0]), np.array([0.0, 0.0, 1.0, 1.0, 1.0]))
    assert c.value == pytest.approx(5 / 6)  # ties within a group: an AUC, by hand: 5/6
