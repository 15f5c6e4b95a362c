"""Fuzz suite, population plans (``psym plan --population``): bad plan options, a population
file or persona template changed, removed or replaced after the plan was written (``psym run``,
``psym batch submit``), and hand-edited population fields of a plan file.

Every case must end in one ``PsymError`` line naming the file, option or field
(``harness.expect_clean_error``); no case writes a plan or starts a run. Special files are a
private FIFO and a directory in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error, run_cli

from psymetrics_core.study.plan import read_plan

MODEL = ["--model", "openai-chat", "--model-args", "base_url=http://127.0.0.1:9/v1,model=m"]


def _population(tmp_path: Path, n: int = 3) -> Path:
    pop = tmp_path / "pop.jsonl"
    pop.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "persona": f"a person who likes {i}"}) + "\n"
            for i in range(n)
        )
    )
    return pop


def _plan_argv(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "plan",
        "--tasks",
        "bfi",
        "--limit",
        "1",
        *MODEL,
        *extra,
        "-o",
        str(tmp_path / "plan.jsonl"),
    ]


# -- psym plan: bad options ------------------------------------------------------------------


def _template(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "t.j2"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def _fifo(tmp_path: Path) -> str:
    path = tmp_path / "fifo.jsonl"
    os.mkfifo(path)
    return str(path)


def _bad_line(tmp_path: Path) -> str:
    pop = _population(tmp_path)
    pop.write_text(pop.read_text() + '{"id": "r9"}\n')
    return str(pop)


# name -> (the plan options, given tmp_path and the population file; what the line names)
PLAN_OPTIONS: dict[str, tuple[Callable[[Path, Path], list[str]], str]] = {
    "sample-zero": (lambda t, p: ["--population", str(p), "--sample", "0"], "--sample"),
    "sample-text": (lambda t, p: ["--population", str(p), "--sample", "many"], "--sample"),
    "sample-above-population": (
        lambda t, p: ["--population", str(p), "--sample", "4"],
        "--sample 4: expected 1 to",
    ),
    "sample-without-population": (lambda t, p: ["--sample", "2"], "--sample 2: needs --population"),
    "template-without-population": (
        lambda t, p: ["--persona-template", "genpt"],
        "--persona-template genpt: needs",
    ),
    "population-missing": (
        lambda t, p: ["--population", str(t / "none.jsonl")],
        "no such population file",
    ),
    "population-folder": (lambda t, p: ["--population", str(t)], "population"),
    "population-fifo": (lambda t, p: ["--population", _fifo(t)], "fifo.jsonl"),
    "population-bad-line": (lambda t, p: ["--population", _bad_line(t)], "line 4"),
    "template-unknown-name": (
        lambda t, p: ["--population", str(p), "--persona-template", "nosuch"],
        "not a built-in template",
    ),
    "template-syntax-error": (
        lambda t, p: ["--population", str(p), "--persona-template", _template(t, "{{ persona")],
        "--persona-template",
    ),
    "template-undefined-label": (
        lambda t, p: [
            "--population",
            str(p),
            "--persona-template",
            _template(t, "{{ labels.nope }}"),
        ],
        "respondent 'r0'",
    ),
    "template-not-utf8": (
        lambda t, p: ["--population", str(p), "--persona-template", _template(t, b"\xff")],
        "UTF-8",
    ),
}


@pytest.mark.parametrize("name", sorted(PLAN_OPTIONS))
def test_fuzz_plan_population_options(tmp_path: Path, name: str) -> None:
    make, expect = PLAN_OPTIONS[name]
    argv = _plan_argv(tmp_path, *make(tmp_path, _population(tmp_path)))
    out = expect_clean_error(lambda: run_cli(argv), [expect], label=name)
    assert expect in out.message, out.message
    assert not (tmp_path / "plan.jsonl").exists()


# -- psym run / psym batch submit: the inputs changed since the plan -------------------------


def _edit(path: Path) -> None:
    path.write_text(path.read_text().replace("likes 1", "likes one"))


def _to_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _to_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


# name -> (which input, how it changes, what the line says)
CHANGED: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "population-edited": ("pop", _edit, "the population file has changed since the plan"),
    "population-blank-line-added": (
        "pop",
        lambda p: p.write_text(p.read_text() + "\n"),
        "population file has changed",
    ),
    "population-removed": ("pop", Path.unlink, "no such population file"),
    "population-now-folder": ("pop", _to_folder, "no such population file"),
    "population-now-fifo": ("pop", _to_fifo, "no such population file"),
    "population-now-malformed": ("pop", lambda p: p.write_text("{not json\n"), "pop.jsonl, line 1"),
    "template-edited": (
        "tmpl",
        lambda p: p.write_text("Be {{ persona }}."),
        "persona template has changed",
    ),
    "template-removed": ("tmpl", Path.unlink, "not a built-in template"),
}


@pytest.mark.parametrize("command", ["run", "batch-submit"])
@pytest.mark.parametrize("name", sorted(CHANGED))
def test_fuzz_run_of_a_changed_population(tmp_path: Path, name: str, command: str) -> None:
    pop = _population(tmp_path)
    tmpl = Path(_template(tmp_path, "You are {{ persona }}."))
    run_cli(_plan_argv(tmp_path, "--population", str(pop), "--persona-template", str(tmpl)))
    which, change, expect = CHANGED[name]
    change(pop if which == "pop" else tmpl)
    plan, out_dir = str(tmp_path / "plan.jsonl"), tmp_path / "out"
    argv = (
        ["run", plan, "-o", str(out_dir)]
        if command == "run"
        else ["batch", "submit", plan, str(out_dir)]
    )
    out = expect_clean_error(lambda: run_cli(argv), [expect], label=f"{command}:{name}")
    assert expect in out.message, out.message
    assert not (out_dir / "samples.jsonl").exists() and not (out_dir / "requests.jsonl").exists()


# -- a plan file's population fields edited by hand ------------------------------------------


def _set(section: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(header: dict[str, Any]) -> None:
        header[section][key] = value

    return apply


HEADER_EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "settings-sample-zero": (_set("settings", "sample", 0), "line 1, field 'settings.sample'"),
    "settings-sample-text": (_set("settings", "sample", "2"), "line 1, field 'settings.sample'"),
    "settings-population-number": (
        _set("settings", "population", 5),
        "line 1, field 'settings.population'",
    ),
    "settings-template-empty": (
        _set("settings", "persona_template", ""),
        "line 1, field 'settings.persona_template'",
    ),
    "versions-population-not-a-hash": (
        _set("versions", "population", "abc"),
        "line 1, field 'versions.population'",
    ),
    "versions-population-changed": (
        _set("versions", "population", "0" * 64),
        "line 2, field 'hash'",
    ),
    "versions-unknown-field": (
        _set("versions", "respondents", "0" * 64),
        "line 1, field 'versions.respondents'",
    ),
}


@pytest.mark.parametrize("name", sorted(HEADER_EDITS))
def test_fuzz_population_plan_header(tmp_path: Path, name: str) -> None:
    pop = _population(tmp_path)
    run_cli(_plan_argv(tmp_path, "--population", str(pop), "--sample", "2"))
    path = tmp_path / "plan.jsonl"
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    edit, expect = HEADER_EDITS[name]
    edit(header)
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    out = expect_clean_error(lambda: read_plan(path), [expect], label=name)
    assert expect in out.message and "plan.jsonl, line " in out.message, out.message
