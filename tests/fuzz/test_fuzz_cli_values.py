"""Fuzz suite: malformed command-line values (items, item texts, model and task arguments,
conditions, design and limits, output and cache paths, task integer options), and a sample
through the real ``psym`` command in subprocesses under an address-space limit. Each must end in
one ``PsymError`` line (see ``harness.py``). Split from test_fuzz_inputs.py.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cases import ALIAS_BOMB, CONDITIONS, ITEM_TEXT_FILES, ITEMS_OPTION, MODEL_ARGS, TASK_ARGS
from harness import expect_clean_error, shared_session
from hypothesis import given
from hypothesis import strategies as st
from inputs_shared import FAST, spec_dir

from psymetrics_core.base.errors import PsymError

# -- command-line values --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def installed() -> Any:
    """One session of the installed plugins for this module's read-only look-ups."""

    return shared_session()


@pytest.mark.parametrize("name, values, expect", ITEMS_OPTION, ids=[c[0] for c in ITEMS_OPTION])
def test_fuzz_items_option(name: str, values: list[str], expect: str) -> None:
    from psymetrics_core.instruments.item_texts import parse_items_option

    out = expect_clean_error(lambda: parse_items_option(values), ["--items"], label=name)
    assert expect in out.message


@pytest.fixture(scope="module")
def sd3(installed: Any) -> Any:
    return installed.get_instrument("sd3")


@pytest.mark.parametrize("name, raw, expect", ITEM_TEXT_FILES, ids=[c[0] for c in ITEM_TEXT_FILES])
def test_fuzz_item_text_files(tmp_path: Path, sd3: Any, name: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.instruments.item_texts import require_item_texts

    p = tmp_path / "texts.csv"
    p.write_bytes(raw)
    out = expect_clean_error(
        lambda: require_item_texts(sd3, "original", {"sd3": p}), ["texts.csv"], label=name
    )
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, model, args, expect", MODEL_ARGS, ids=[c[0] for c in MODEL_ARGS])
def test_fuzz_model_args(installed: Any, name: str, model: str, args: str, expect: str) -> None:
    """Backends are built (never loaded) from bad --model-args: one line naming the argument."""
    out = expect_clean_error(lambda: installed.make_backend(model, args), [], label=name)
    assert expect in out.message, out.message


@FAST
@given(text=st.text(alphabet="abc=,:/ \t%", max_size=30))
def test_fuzz_model_args_text(text: str) -> None:
    """Arbitrary --model-args text is parsed or refused in one line, never a traceback."""
    from psymetrics_core.backends.base import parse_model_args

    try:
        parsed = parse_model_args(text)
    except PsymError as exc:
        assert "\n" not in str(exc)
        return
    assert all(k for k in parsed)


@pytest.mark.parametrize("name, values, expect", TASK_ARGS, ids=[c[0] for c in TASK_ARGS])
def test_fuzz_task_args(installed: Any, name: str, values: list[str], expect: str) -> None:
    from psymetrics_core.administer.options import parse_task_args
    from psymetrics_core.administer.runner import evaluate

    def run() -> None:
        opts = parse_task_args(values, ["bfi"], session=installed)
        evaluate(["bfi"], task_options=opts, limit=1, model="no-such-backend", session=installed)

    out = expect_clean_error(run, ["--task-arg", "bfi", "option"], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, values, expect", CONDITIONS, ids=[c[0] for c in CONDITIONS])
def test_fuzz_conditions(installed: Any, name: str, values: list[str], expect: str) -> None:
    from psymetrics_core.administer.conditions import cells_for

    out = expect_clean_error(lambda: cells_for(values, installed), [], label=name)
    assert expect in out.message, out.message


@FAST
@given(spec=st.text(alphabet="+=abcdefghijklmnopqrstuvwxyz-", max_size=25))
def test_fuzz_condition_text(installed: Any, spec: str) -> None:
    """Arbitrary --condition text builds cells or fails in one line."""
    from psymetrics_core.administer.conditions import cells_for

    try:
        cells = cells_for([spec], installed)
    except PsymError as exc:
        assert "\n" not in str(exc)
        return
    assert cells


def test_fuzz_design_and_limits() -> None:
    from psymetrics_core import evaluate

    for kwargs, expect in [
        ({"design": "diagonal"}, "--design"),
        ({"limit": 0}, "--limit"),
        ({"repeats": 0}, "--repeats"),
        ({"mode": "vibes"}, "--mode"),
        ({"temperature": float("inf")}, "--temperature"),
        ({"judge_max_new_tokens": -1}, "--judge-max-new-tokens"),
    ]:
        out = expect_clean_error(lambda k=kwargs: evaluate(["bfi"], **k), [], label=str(kwargs))
        assert expect in out.message, out.message


# -- output and cache paths -----------------------------------------------------------------------


def test_fuzz_output_and_cache_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from psymetrics_core.backends.cache import ResponseCache
    from psymetrics_core.records.rundir import claim_run_dir

    afile = tmp_path / "f"
    afile.write_text("x")
    (tmp_path / "r" / "results.json").mkdir(parents=True)
    held = tmp_path / "held"

    def twice() -> None:
        with claim_run_dir(held), claim_run_dir(held):
            pass

    done = tmp_path / "done"
    done.mkdir()
    (done / "samples.jsonl").write_text("{}\n")
    for label, fn, name in [
        ("output=file", lambda: claim_run_dir(afile).__enter__(), "f"),
        ("output-under-file", lambda: claim_run_dir(afile / "a" / "b").__enter__(), "f"),
        ("results.json-dir", lambda: claim_run_dir(tmp_path / "r").__enter__(), "results.json"),
        ("locked", twice, "held"),
        ("existing-run", lambda: claim_run_dir(done).__enter__(), "done"),
        (
            "both-flags",
            lambda: claim_run_dir(done, overwrite=True, resume=True).__enter__(),
            "--overwrite",
        ),
        ("cache-dir-file", lambda: ResponseCache(afile / "responses.sqlite3"), "f"),
        ("cache-db-dir", lambda: ResponseCache(tmp_path / "r"), "r"),
    ]:
        expect_clean_error(fn, [name], label=label)
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"not a database" * 100)
    expect_clean_error(lambda: ResponseCache(junk).stats(), ["junk.sqlite3"], label="junk-db")


# -- a sample through the real CLI, in subprocesses with an address-space limit -------------------

MEMORY_LIMIT = 3 * 1024**3  # bytes of address space for one `psym` process


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _cli_cases(tmp: Path) -> list[tuple[str, list[str], str]]:
    bomb = spec_dir(tmp / "bomb", ALIAS_BOMB.encode()) if (tmp / "bomb").mkdir() is None else tmp
    latin = tmp / "latin.csv"
    latin.write_bytes(b"respondent,item,response\nA,1,\xe9\n")
    huge = tmp / "huge.csv"
    huge.write_text('respondent,item,response\nA,1,"' + "9" * 200_000 + '"\n')
    pb = tmp / "pb.json"
    pb.write_text('[{"name": "X", "catagories": []}]')
    persona = tmp / "p.yaml"
    persona.write_text(ALIAS_BOMB)
    return [
        ("validate-bomb", ["validate", str(bomb)], "alias"),
        ("score-latin1", ["score", "--task", "bfi", "--responses", str(latin)], "UTF-8"),
        ("score-huge-field", ["score", "--task", "bfi", "--responses", str(huge)], "131,072"),
        (
            "import-catagories",
            ["import", "psychobench", str(pb), "--output", str(tmp / "o")],
            "catagories",
        ),
        (
            "eval-persona-bomb",
            [
                "eval",
                "--tasks",
                "bfi",
                "--condition",
                f"persona={persona}",
                "--output",
                str(tmp / "run1"),
            ],
            "alias",
        ),
        (
            "eval-form",
            ["eval", "--tasks", "bfi", "--form", "alternate", "--output", str(tmp / "run2")],
            "alternate",
        ),
        (
            "eval-temperature",
            ["eval", "--tasks", "bfi", "--temperature", "nan", "--output", str(tmp / "run3")],
            "--temperature",
        ),
        (
            "eval-device",
            ["eval", "--tasks", "bfi", "--model-args", "device=gpu", "--output", str(tmp / "run4")],
            "device",
        ),
    ]


def test_fuzz_cli_sample(tmp_path: Path) -> None:
    env = {**os.environ, "PSYM_CACHE_DIR": str(tmp_path / "cache"), "PSYM_DEBUG": "0"}
    for label, args, expect in _cli_cases(tmp_path):
        r = subprocess.run(
            [sys.executable, "-m", "psymetrics_core", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=_limited,
        )
        err = r.stderr.strip()
        assert r.returncode not in (0, None), f"{label}: exit 0 on invalid input"
        assert "Traceback" not in err, f"{label}: {err[-2000:]}"
        lines = [x for x in err.splitlines() if x.startswith("psym")]
        assert len(lines) == 1 and expect in lines[0], f"{label}: {err[-1000:]}"
        assert not (tmp_path / "run1").exists() and not (tmp_path / "run4").exists()


TASK_INT_VALUES = ["--5", "\u00b2", "1e3", "-1", "", "  ", "9" * 5000, "0x10", "1.5"]


@pytest.mark.parametrize("raw", TASK_INT_VALUES, ids=[f"v{i}" for i in range(len(TASK_INT_VALUES))])
def test_fuzz_task_integer_options(raw: str) -> None:
    """An integer task option (e.g. a projective task's ``stimulus_seed``) given junk: one
    line naming the task and option, never a ValueError traceback."""
    from psymetrics_core.administer.kinds import FreeTextTask

    task = FreeTextTask.define(
        id="t",
        name="t",
        version="1",
        citation="c",
        license_status="l",
        item_source="s",
        scoring_rule="r",
        scales={},
        options={"n": "an integer"},
    )
    task.options = {"n": raw}
    out = expect_clean_error(lambda: task.option_int("n", 1), ["option n"], label=raw[:20])
    assert "task 't'" in out.message
