"""Fuzz suite, bounds (issue 24, items 4, 5 and the earlier residuals): every number a user
gives (command-line options, task options, backend arguments) has an upper bound checked
before work starts. Files (images, special files, PsychoBench norms) are in
test_fuzz_file_bounds.py.

Every case is a named parameter (``pytest --collect-only -q tests/fuzz/test_fuzz_bounds.py
tests/fuzz/test_fuzz_file_bounds.py`` counts them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error, shared_session

BIG = "100000000"
HUGE = "1" + "0" * 40

# -- numeric command-line options: (id, argv after `psym`, the option, the bound's text) --------

CLI_NUMBERS: list[tuple[str, list[str], str, str]] = [
    ("eval-repeats-1e8", ["eval", "--repeats", BIG], "--repeats", "1-1000"),
    ("eval-repeats-1001", ["eval", "--repeats", "1001"], "--repeats", "1-1000"),
    ("eval-repeats-0", ["eval", "--repeats", "0"], "--repeats", "1-1000"),
    ("eval-repeats-text", ["eval", "--repeats", "many"], "--repeats", "1-1000"),
    ("eval-repeats-float", ["eval", "--repeats", "2.5"], "--repeats", "1-1000"),
    ("eval-seed-1e40", ["eval", "--seed", HUGE], "--seed", "0-2,147,483,647"),
    ("eval-seed-negative", ["eval", "--seed", "-1"], "--seed", "0-2,147,483,647"),
    ("eval-seed-2e31", ["eval", "--seed", str(2**31)], "--seed", "0-2,147,483,647"),
    ("eval-limit-1e7", ["eval", "--limit", "10000000"], "--limit", "1-1,000,000"),
    (
        "eval-max-new-tokens",
        ["eval", "--max-new-tokens", "1000000000"],
        "--max-new-tokens",
        "1-131,072",
    ),
    (
        "eval-judge-tokens",
        ["eval", "--judge-max-new-tokens", BIG],
        "--judge-max-new-tokens",
        "1-131,072",
    ),
    ("eval-judge-batch-0", ["eval", "--judge-batch", "0"], "--judge-batch", "1-50"),
    ("eval-judge-batch-51", ["eval", "--judge-batch", "51"], "--judge-batch", "1-50"),
    ("eval-judge-batch-text", ["eval", "--judge-batch", "all"], "--judge-batch", "1-50"),
    ("judge-judge-batch-1e8", ["judge", "RUN", "--judge-batch", BIG], "--judge-batch", "1-50"),
    ("eval-temperature-1e308", ["eval", "--temperature", "1e308"], "--temperature", "0-100"),
    ("eval-temperature-inf", ["eval", "--temperature", "inf"], "--temperature", "0-100"),
    ("eval-temperature-nan", ["eval", "--temperature", "nan"], "--temperature", "0-100"),
    ("eval-concurrency", ["eval", "--concurrency", "100000"], "--concurrency", "1-1024"),
    ("plan-repeats", ["plan", "--repeats", BIG], "--repeats", "1-1000"),
    ("plan-seed", ["plan", "--seed", HUGE], "--seed", "0-2,147,483,647"),
    ("plan-limit", ["plan", "--limit", HUGE], "--limit", "1-1,000,000"),
    ("run-shards", ["run", "PLAN", "--shards", "100000"], "--shards", "1-1000"),
    ("run-concurrency", ["run", "PLAN", "--concurrency", BIG], "--concurrency", "1-1024"),
    (
        "contamination-permutations-1e9",
        ["contamination", "--permutations", "1000000000"],
        "--permutations",
        "1-10,000",
    ),
    (
        "contamination-permutations-0",
        ["contamination", "--permutations", "0"],
        "--permutations",
        "1-10,000",
    ),
    ("contamination-limit", ["contamination", "--limit", HUGE], "--limit", "2-1,000,000"),
    ("contamination-limit-1", ["contamination", "--limit", "1"], "--limit", "2-1,000,000"),
    (
        "contamination-bootstrap",
        ["contamination", "--option", "bootstrap=1000000000"],
        "--option bootstrap",
        "1-20,000",
    ),
    (
        "contamination-seed",
        ["contamination", "--option", f"seed={HUGE}"],
        "--option seed",
        "0-2,147,483,647",
    ),
    (
        "contamination-verbatim-tokens",
        ["contamination", "--option", "max_new_tokens_verbatim=1000000000"],
        "--option max_new_tokens_verbatim",
        "1-131,072",
    ),
    ("analyze-fence-k", ["analyze", "RUN", "--fence-k", "1e300"], "--fence-k", "0-100"),
    ("analyze-fence-k-nan", ["analyze", "RUN", "--fence-k", "nan"], "--fence-k", "0-100"),
    (
        "projective-analyze-n-boot",
        ["projective-analyze", "RUN", "--n-boot", "1000000000"],
        "--n-boot",
        "1-100,000",
    ),
    (
        "score-judge-tokens",
        ["score", "--task", "bfi", "--responses", "RESP", "--judge-max-new-tokens", BIG],
        "--judge-max-new-tokens",
        "1-131,072",
    ),
]

_NEEDS = {  # what a command needs besides the number under test
    "eval": ["--tasks", "bfi", "--output", "OUT"],
    "plan": ["--tasks", "bfi", "--output", "OUT/plan.jsonl"],
    "run": ["--output", "OUT"],
    "contamination": ["--tasks", "bfi", "--output", "OUT"],
}


@pytest.fixture(scope="module")
def warm_cli() -> None:
    """Import each command once outside the harness (tracemalloc makes first imports slow)."""
    import click

    from psymetrics_core.cli import cli

    ctx = click.Context(cli)
    for name in {c[1][0] for c in CLI_NUMBERS}:
        cli.get_command(ctx, name)


def _argv(argv: list[str], tmp_path: Path) -> list[str]:
    plan = tmp_path / "plan.jsonl"
    plan.write_text("{}\n")
    resp = tmp_path / "r.csv"
    resp.write_text("respondent,item,response\nA,1,3\n")
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    subs = {"PLAN": str(plan), "RESP": str(resp), "RUN": str(run), "OUT": str(tmp_path / "out")}
    full = [*argv, *_NEEDS.get(argv[0], [])]
    return [re.sub("PLAN|RESP|RUN|OUT", lambda m: subs[m.group(0)], a) for a in full]


@pytest.mark.parametrize("name, argv, option, span", CLI_NUMBERS, ids=[c[0] for c in CLI_NUMBERS])
def test_fuzz_cli_number_bounds(
    warm_cli: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    argv: list[str],
    option: str,
    span: str,
) -> None:
    """Out of range: one line naming the option, the value's bound, before any work (no model,
    no output directory, within the harness's time and memory bounds)."""
    from psymetrics_core.cli import cli

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    args = _argv(argv, tmp_path)
    out = expect_clean_error(
        lambda: cli.main(args=args, prog_name="psym", standalone_mode=False), [option], label=name
    )
    assert span in out.message, out.message
    assert not (tmp_path / "out").exists()


def test_fuzz_cli_bounds_one_line_through_main(tmp_path: Path, capsys: Any) -> None:
    """Through ``main`` (the console script): exit 1 and one ``psym: error:`` line."""
    from psymetrics_core.cli import main

    with pytest.raises(SystemExit) as info:
        main(["eval", "--tasks", "bfi", "--repeats", BIG, "--output", str(tmp_path / "o")])
    assert info.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err == f"psym: error: --repeats must be an integer in 1-1000, got '{BIG}'"


def test_every_numeric_option_is_bounded_and_documented() -> None:
    """Every integer or real option of every command (plugins' included) has a lower and an
    upper bound, and every row of the bounds table is in docs/reference/bounds.md with its range."""
    import click

    from psymetrics_core.base.bounds import BOUNDS
    from psymetrics_core.cli import cli

    unbounded = []

    def walk(cmd: click.Command, path: str) -> None:
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd)
            for sub in cmd.list_commands(ctx):
                found = cmd.get_command(ctx, sub)
                if found is not None:
                    walk(found, f"{path} {sub}")
            return
        for p in cmd.params:
            if isinstance(p.type, click.types.IntParamType | click.types.FloatParamType):
                rng = getattr(p.type, "max", None), getattr(p.type, "min", None)
                if None in rng:
                    unbounded.append(f"{path} {p.opts[0]}")

    walk(cli, "psym")
    assert not unbounded, unbounded
    doc = (Path(__file__).parents[2] / "docs" / "reference" / "bounds.md").read_text(
        encoding="utf-8"
    )
    for name, b in BOUNDS.items():
        assert f"| `{name}` | {b.span} |" in doc, f"docs/reference/bounds.md lacks {name} {b.span}"


# -- task options (--task-arg TASK.KEY=N) ---------------------------------------------------------

TASK_OPTIONS: list[tuple[str, str, str, str, str]] = [
    ("housing-n-lists-1e8", "housing", "n_lists", BIG, "1-1000"),
    ("housing-n-lists-1001", "housing", "n_lists", "1001", "1-1000"),
    ("housing-list-size", "housing", "list_size", "5000", "1-1000"),
    ("housing-sample-seed", "housing", "sample_seed", str(2**40), "0-2,147,483,647"),
    ("housing-sample-seed-negative", "housing", "sample_seed", "-3", "0-2,147,483,647"),
    ("tat-stimulus-seed", "tat", "stimulus_seed", str(10**12), "0-2,147,483,647"),
    ("sct-interpreter-tokens", "sct", "interpreter_tokens", "1000000000", "1-131,072"),
    ("rorschach-diagnostician-tokens", "rorschach", "diagnostician_tokens", "0", "1-131,072"),
    ("refletter-min-count", "refletter", "min_count", "10000000", "0-1,000,000"),
    ("moral-advice-per-foundation", "moral-advice", "per_foundation", BIG, "1-100,000"),
]

HOUSING_TABLE = "city,neighborhood,opportunity_index\n" + "".join(
    f"Springfield,N{i},{i / 10}\n" for i in range(10)
)


def _task_call(task_id: str, key: str, raw: str, tmp_path: Path) -> Callable[[], Any]:
    from psymetrics_core.administer.options import with_options

    inst = shared_session().get_instrument(task_id)
    opts = {key: raw}
    if task_id == "housing":
        (tmp_path / "t.csv").write_text(HOUSING_TABLE)
        opts["data"] = str(tmp_path / "t.csv")
        from psymetrics_plugin_housing import grid

        task = with_options(inst, opts)
        return lambda: grid(task)  # type: ignore[arg-type]
    if task_id == "moral-advice":
        from psymetrics_plugin_moral_advice import dilemmas_for

        return lambda: dilemmas_for(with_options(inst, opts))
    task = with_options(inst, opts)
    if task_id == "refletter":
        return lambda: task.option_int("min_count", 5, 0)  # type: ignore[attr-defined]
    if key == "stimulus_seed":
        return lambda: task.load_items()  # type: ignore[attr-defined]
    return lambda: task.check_options()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name, task_id, key, raw, span", TASK_OPTIONS, ids=[c[0] for c in TASK_OPTIONS]
)
def test_fuzz_task_option_bounds(
    tmp_path: Path, name: str, task_id: str, key: str, raw: str, span: str
) -> None:
    out = expect_clean_error(_task_call(task_id, key, raw, tmp_path), [key], label=name)
    assert span in out.message and task_id in out.message, out.message


# -- backend arguments (--model-args KEY=N) -----------------------------------------------------

BACKEND_ARGS: list[tuple[str, str, str, str]] = [
    ("openai-timeout", "openai-chat", "timeout=1e9", "0.001-3600"),
    ("openai-deadline", "openai-chat", "deadline=1e12", "0.001-86,400"),
    ("openai-concurrency", "openai-chat", "concurrency=100000", "1-1024"),
    ("openai-max-retries", "openai-chat", "max_retries=1000000", "0-100"),
    ("openai-backoff", "openai-completions", "backoff=1e6", "0-60"),
    ("openai-top-logprobs", "openai-chat", "top_logprobs=1000000", "1-100"),
    (
        "openai-max-response-bytes",
        "openai-chat",
        "max_response_bytes=" + "9" * 15,
        "1024-1,073,741,824",
    ),
    ("hf-batch-size", "hf", "batch_size=1000000", "1-4096"),
    ("hf-threads", "hf", "threads=1000000", "1-1024"),
]


@pytest.mark.parametrize("name, backend, arg, span", BACKEND_ARGS, ids=[c[0] for c in BACKEND_ARGS])
def test_fuzz_backend_arg_bounds(name: str, backend: str, arg: str, span: str) -> None:

    base = "pretrained=/nonexistent" if backend == "hf" else "base_url=http://127.0.0.1:9,model=m"
    args = dict(kv.split("=", 1) for kv in f"{base},{arg}".split(","))
    key = arg.split("=")[0]
    out = expect_clean_error(
        lambda: shared_session().make_backend(backend, args), [f"--model-args {key}"], label=name
    )
    assert span in out.message, out.message
