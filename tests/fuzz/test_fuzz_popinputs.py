"""Fuzz: the population surface's own inputs under hostile use (issue 31, item 10).

- ``psym population build``: an output that is the persona source (never replaced), a source
  over the 100,000-respondent bound without ``--n`` (refused where the file is written, as
  ``psym eval`` refuses it where the file is read), a 300-character file name, ``-o newdir/``,
  ``--split`` on a JSON-lines file;
- ``psym report -o`` naming the population file the run used (a provenance file of the run);
- persona templates: the budget (time, output length, ``range``, ``*``, ``**``, formats),
  ``{% include %}`` and ``{% import %}``, sandbox refusals, a template every respondent would
  read the same (no ``{{ persona }}``, Python's ``{persona}``), and ``--persona-template``
  without ``--population``.

Every case is one ``psym:`` line naming the option, file or template, within the harness's
time and memory bounds; no case writes its output or replaces an input.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path

import pytest
from harness import expect_clean_error, run_cli

from psymetrics_core.records.population import MAX_RESPONDENTS, Respondent
from psymetrics_core.study.population import write_population


def _source(path: Path, n: int) -> Path:
    path.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "persona": f"a person who likes {i}"}) + "\n"
            for i in range(n)
        )
    )
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- psym population build -------------------------------------------------------------------


def test_build_never_replaces_its_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _source(tmp_path / "src.jsonl", 5)
    before = _digest(src)
    monkeypatch.chdir(tmp_path)
    for out in (str(src), "src.jsonl", "./src.jsonl", f"{tmp_path}/../{tmp_path.name}/src.jsonl"):
        argv = ["population", "build", "--source", str(src), "-o", out]
        res = expect_clean_error(lambda argv=argv: run_cli(argv), ["src.jsonl"], label=out)
        assert "is one of this command's inputs" in res.message, res.message
    assert _digest(src) == before
    run_cli(["population", "build", "--source", str(src), "-o", "pop.jsonl"])  # valid: written
    assert len((tmp_path / "pop.jsonl").read_text().splitlines()) == 5


def test_build_without_n_over_the_bound(tmp_path: Path) -> None:
    """100,001 rows without --n: refused at build time (the bound psym eval reads), with the
    way out (--n); 100,001 rows with --n 3: a sample of 3."""
    src = _source(tmp_path / "huge.jsonl", MAX_RESPONDENTS + 1)
    out = tmp_path / "pop.jsonl"
    argv = ["population", "build", "--source", str(src), "-o", str(out)]
    res = expect_clean_error(lambda: run_cli(argv), ["huge.jsonl"], label="no --n")
    assert f"over {MAX_RESPONDENTS:,} rows" in res.message and "--n" in res.message
    assert not out.exists()
    run_cli([*argv, "--n", "3"])
    assert len(out.read_text().splitlines()) == 3


def test_write_population_enforces_the_bound(tmp_path: Path) -> None:
    """The writer itself refuses a population over the bound (whatever built it)."""
    people = [Respondent(f"r{i}", f"p{i}") for i in range(MAX_RESPONDENTS + 1)]
    out = tmp_path / "pop.jsonl"
    res = expect_clean_error(lambda: write_population(out, people), ["pop.jsonl"], label="write")
    assert f"at most {MAX_RESPONDENTS:,}" in res.message
    assert not out.exists()


def test_build_enforces_the_label_bound(tmp_path: Path) -> None:
    """A source row of 201 label fields: refused at build (read_population would refuse the
    file it wrote)."""
    src = tmp_path / "wide.jsonl"
    src.write_text(json.dumps({"persona": "a nurse", **{f"f{i}": i for i in range(201)}}) + "\n")
    argv = ["population", "build", "--source", str(src), "-o", str(tmp_path / "pop.jsonl")]
    res = expect_clean_error(lambda: run_cli(argv), ["wide.jsonl"], label="labels")
    assert "201 label fields; at most 200" in res.message
    assert not (tmp_path / "pop.jsonl").exists()


@pytest.mark.parametrize(
    ("name", "output", "extra", "expect"),
    [
        ("name-300", "a" * 300, [], "expected at most 255 bytes"),
        ("trailing-slash", "newdir/", [], "names a folder"),
        ("split-on-jsonl", "pop.jsonl", ["--split", "train"], "--split train"),
    ],
)
def test_build_output_and_split(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    output: str,
    extra: list[str],
    expect: str,
) -> None:
    src = _source(tmp_path / "src.jsonl", 3)
    monkeypatch.chdir(tmp_path)
    argv = ["population", "build", "--source", str(src), "-o", output, *extra]
    res = expect_clean_error(lambda: run_cli(argv), [expect], label=name)
    assert expect in res.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.jsonl"]  # nothing written


# -- psym report -o onto the run's population file ---------------------------------------------


@pytest.fixture(scope="module")
def pop_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """bfi items 1-4 given to 4 binary profiles against the loopback server."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.latency_server import LatencyServer

    base = tmp_path_factory.mktemp("popinputs")
    pop = base / "big5.jsonl"
    run_cli(["population", "build", "--generate", "binary", "--n", "4", "-o", str(pop)])
    with LatencyServer(latency=0.0) as srv:
        model = ["--model", "openai-chat", "--model-args", f"base_url={srv.base_url},model=hash"]
        run_cli(
            [
                "eval",
                "--tasks",
                "bfi",
                "--limit",
                "4",
                "--population",
                str(pop),
                *model,
                "-o",
                str(base / "run"),
            ]
        )
    import_module("psymetrics_core.cli.report_cmd")  # its imports before the timed cases
    yield base / "run", pop


def test_report_refuses_to_overwrite_the_population_file(pop_run: tuple[Path, Path]) -> None:
    run, pop = pop_run
    before = _digest(pop)
    argv = ["report", str(run), "-o", str(pop)]
    res = expect_clean_error(lambda: run_cli(argv), ["big5.jsonl"], label="report -o pop")
    assert "is one of this command's inputs" in res.message
    assert _digest(pop) == before


# -- persona templates -----------------------------------------------------------------------

NESTED = (
    "{{ persona }}{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
)
TEMPLATES = [
    ("nested-range", NESTED, "time budget"),
    (
        "nested-persona-loops",
        "{% for a in persona %}{% for b in persona %}{{ persona }}{% endfor %}{% endfor %}",
        "budget",
    ),
    ("power-tower", "{{ persona }}{{ 9 ** (9 ** 10) }}", "9 ** 3486784401"),
    ("repeat-persona", "{{ persona * 10**9 }}", "repeated 1,000,000,000 times"),
    ("range-10-7", "{{ persona }}{{ range(10**7) | list }}", "range(10000000"),
    ("center", "{{ persona | center(10**9) }}", "center(1000000000)"),
    ("replace-empty", "{{ persona | replace('', persona * 50) }}", "budget"),
    ("format-width", "{{ '%1000000000s' | format(persona) }}", "the format"),
    ("str-format-width", "{{ '{:>1000000000}'.format(persona) }}", "the format"),
    ("join", "{{ range(99999) | join(persona) }}", "budget"),
    (
        "doubling",
        "{% set a = persona ~ persona %}{% set a = a ~ a %}{% set a = a ~ a %}"
        "{% set a = a ~ a %}{% set a = a ~ a %}{% set a = a ~ a %}{% set a = a ~ a %}"
        "{% set a = a ~ a %}{% set a = a ~ a %}{% set a = a ~ a %}{{ a | length }}",
        "budget",
    ),
    # a macro that calls itself: stopped at the nesting bound, not by Python's RecursionError
    ("recursion", "{% macro f(x) %}{{ f(x) }}{% endmacro %}{{ f(persona) }}", "nested over 50"),
    ("include", "{% include 'other.j2' %}{{ persona }}", "{% include %} is not available"),
    ("import", "{% import 'other.j2' as o %}{{ persona }}", "{% import %} is not available"),
    ("from-import", "{% from 'other.j2' import x %}{{ persona }}", "is not available"),
    ("extends", "{% extends 'other.j2' %}{{ persona }}", "{% extends %} is not available"),
    ("dunder", "{{ persona.__class__.__mro__ }}", "refused by the sandbox"),
    ("subclasses", "{{ persona }}{{ ''.__class__.__subclasses__() }}", "refused by the sandbox"),
    ("mutation", "{% set l = [] %}{{ l.append(persona) }}{{ persona }}", "refused by the sandbox"),
    ("no-persona", "You are a person. Answer as one.", "every respondent would get the same"),
    ("python-syntax", "You are {persona}. Answer accordingly.", "'{persona}' is Python's syntax"),
    ("same-for-all", "You are {{ labels.get('nothing', 'someone') }}.", "the same prompt"),
    ("type-error", "{{ persona + 1 }}", "TypeError"),
]


@pytest.mark.parametrize(("name", "text", "expect"), TEMPLATES, ids=[t[0] for t in TEMPLATES])
def test_fuzz_persona_template(
    tmp_path: Path, name: str, text: str, expect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each template: one line naming the template (and the respondent where one was being
    rendered); no run directory written. The time budget is cut to 0.2 s here (a runaway
    template is stopped all the same, without spending the 2 s; the bound itself is checked
    against docs/reference/bounds.md below)."""
    from psymetrics_core.administer import persona_template

    monkeypatch.setattr(persona_template, "RENDER_SECONDS", 0.2)
    pop = tmp_path / "pop.jsonl"
    pop.write_text(
        "".join(
            json.dumps(
                {"id": f"r{i}", "persona": f"a person who is {i} " * 900, "labels": {"n": i}}
            )
            + "\n"
            for i in range(3)
        )
    )
    tmpl = tmp_path / "t.j2"
    tmpl.write_text(text)
    out = tmp_path / "run"
    argv = [
        "eval",
        "--tasks",
        "bfi",
        "--limit",
        "1",
        "--model",
        "openai-chat",
        "--model-args",
        "base_url=http://127.0.0.1:9/v1,model=m",
        "--population",
        str(pop),
        "--persona-template",
        str(tmpl),
        "-o",
        str(out),
    ]
    res = expect_clean_error(lambda: run_cli(argv), ["t.j2"], label=name)
    assert expect in res.message, (name, res.message)
    assert "--persona-template" in res.message
    assert not (out / "results.json").exists()


def test_template_budget_keeps_valid_templates(tmp_path: Path) -> None:
    """The budget does not refuse ordinary templates: labels, loops and filters within it."""
    from psymetrics_core.administer.persona_template import compile_template, render

    src = (
        "You are {{ persona | trim }} ({{ labels.age }}).{% for k in labels | sort %} "
        "{{ k }}{% endfor %} {{ '%5s' | format(id) }} {{ range(3) | join(',') }}"
    )
    out = render(
        compile_template(src, "t.j2"),
        "t.j2",
        "r1",
        persona=" a nurse ",
        id="r1",
        labels={"age": 20, "city": "Lyon"},
    )
    assert out == "You are a nurse (20). age city    r1 0,1,2"


@pytest.mark.parametrize("template", ["jung", "plain", "TEMPLATE_FILE"])
def test_persona_template_without_population(tmp_path: Path, template: str) -> None:
    """Refused whichever template is named, the default's name included (never ignored)."""
    tmpl = tmp_path / "t.j2"
    tmpl.write_text("{{ persona }}")
    template = template.replace("TEMPLATE_FILE", str(tmpl))
    for command in ("eval", "plan"):
        argv = [
            command,
            "--tasks",
            "bfi",
            "--limit",
            "1",
            "--model",
            "openai-chat",
            "--model-args",
            "base_url=http://127.0.0.1:9/v1,model=m",
            "--persona-template",
            template,
            "-o",
            str(tmp_path / "out"),
        ]
        res = expect_clean_error(lambda argv=argv: run_cli(argv), [template], label=command)
        assert "needs --population FILE" in res.message
    assert not (tmp_path / "out").exists()


def test_bounds_page_states_the_population_bounds() -> None:
    """docs/reference/bounds.md's population table gives the bounds the code enforces."""
    from psymetrics_core.administer import persona_template as pt
    from psymetrics_core.analysis.population import identification as ident
    from psymetrics_core.records.population import MAX_PERSONA

    page = (Path(__file__).parents[2] / "docs" / "reference" / "bounds.md").read_text("utf-8")
    rows = {
        "respondents of a population file": f"{MAX_RESPONDENTS:,} (`MAX_RESPONDENTS`)",
        "persona text": f"{MAX_PERSONA:,} characters",
        "one rendered persona prompt": f"{pt.MAX_OUTPUT:,} characters",
        "rendering one respondent's prompt": f"{pt.RENDER_SECONDS:g} s",
        "the result of `**` in a template": f"{pt.MAX_POWER_BITS:,} bits",
        "macro calls nested in one another": f"{pt.MAX_NESTING} (`MAX_NESTING`)",
        "factors of a `--cfa-model`": f"{ident.MAX_FACTORS} (`MAX_FACTORS`)",
        "loadings and covariances of a `--cfa-model`": f"{ident.MAX_TERMS:,} (`MAX_TERMS`)",
    }
    for what, bound in rows.items():
        assert f"| {what} | {bound}" in page, (what, bound)
