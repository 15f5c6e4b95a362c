"""How ``psym --help`` and each command's ``--help`` read: commands in groups, and an example at
the end of every command's help.

``GROUPS`` orders the top-level commands under headings, each with one example; commands that
installed plugins add appear under "Plugin commands". ``EXAMPLES`` gives the example printed at
the end of a command's help when the command has no epilog of its own (a plugin may set its own
``epilog``).
"""

from __future__ import annotations

import click

__all__ = ["GROUPS", "EXAMPLES", "add_example", "format_grouped"]

# (heading, commands, one example)
GROUPS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Run a model", ("eval", "score", "judge", "lm-eval"), "psym eval --tasks bfi,mfq"),
    (
        "Analyse runs",
        (
            "analyze",
            "fidelity",
            "report",
            "export",
            "contamination",
            "validity",
            "projective-analyze",
        ),
        "psym report psym-results/RUN -o report.html",
    ),
    (
        "Instruments",
        ("list", "show", "validate", "new-plugin", "import", "schema"),
        "psym show asi",
    ),
    ("Plugins and docs", ("plugins", "install", "tasks-path", "docs"), "psym plugins available"),
    (
        "Studies at scale",
        ("plan", "run", "merge", "batch", "cache", "population"),
        "psym plan --tasks bfi --repeats 3 -o study.jsonl && psym run study.jsonl -o study",
    ),
)

EXAMPLES: dict[str, str] = {
    "eval": "psym eval --tasks bfi,mfq -o run1\n"
    "psym eval --tasks bfi --population big5.jsonl --persona-template serapio-garcia -o pop\n"
    "psym eval --tasks bfi --model openai-chat "
    "--model-args base_url=http://127.0.0.1:8000/v1,model=NAME --output api-run",
    "score": "psym score --task bfi --responses answers.csv",
    "judge": "psym judge interview-run --judge-model openai-chat "
    "--judge-model-args base_url=URL,model=NAME -o rejudged",
    "lm-eval": "psym lm-eval --model hf --model_args pretrained=PATH --tasks psym_bfi",
    "analyze": "psym analyze run1 run2 --output analysis\n"
    "psym analyze --task asi --responses long.csv --group model",
    "fidelity": "psym fidelity pop-run bfi_long.csv --group gender -o fidelity",
    "report": "psym report run1 run2 -o report.html",
    "export": "psym export scores run1 -o scores.csv",
    "export scores": "psym export scores run1 run2 -o scores.csv",
    "export population": "psym export population asi-population -o population.csv",
    "export samples": "psym export samples run1 --format parquet -o samples.parquet",
    "export judge": "psym export judge run1 -o judge.csv",
    "export lm-eval": "psym export lm-eval --tasks bfi,mfq -o lm-eval-tasks",
    "validity": "psym validity run1",
    "contamination": "psym contamination --tasks bfi,mfq -o contamination-run",
    "contamination tables": "psym contamination tables run-model-a run-model-b -o tables.md",
    "projective-analyze": "psym projective-analyze tat-run --labels labels.json",
    "list": "psym list",
    "show": "psym show bfi",
    "validate": "psym validate path/to/instrument.yaml",
    "new-plugin": "psym new-plugin grit2",
    "import": "psym import psychobench questionnaires.json --output imported",
    "import psychobench": "psym import psychobench questionnaires.json --output imported",
    "import answers": "psym import answers answers.csv --task pvq40 --model m -o runs/imported",
    "import logprobs": "psym import logprobs scores.csv --task value-portrait --model qwen -o run",
    "schema": "psym schema results",
    "plugins": "psym plugins\npsym plugins available",
    "plugins available": "psym plugins available --json",
    "install": "psym install mfq",
    "tasks-path": "psym tasks-path",
    "docs": "make docs && psym docs --open",
    "plan": "psym plan --tasks bfi,mfq --repeats 3 -o study.jsonl",
    "run": "psym run study.jsonl -o study\npsym run study.jsonl --shard 1/2 -o shard1",
    "merge": "psym merge shard1 shard2 -o study",
    "batch": "psym batch submit study.jsonl batch-dir",
    "batch submit": "psym batch submit study.jsonl batch-dir",
    "batch status": "psym batch status batch-dir",
    "batch collect": "psym batch collect study.jsonl batch-dir",
    "cache": "psym cache info",
    "cache info": "psym cache info",
    "cache export": "psym cache export responses.jsonl.gz",
    "cache import": "psym cache import responses.jsonl.gz",
    "cache clear": "psym cache clear --yes",
    "population": "psym population build --generate binary -o big5.jsonl",
    "population build": "psym population build --source personas.jsonl --n 300 --seed 1 "
    "--licence CC-BY-NC-SA-4.0 -o population.jsonl\n"
    "psym population build --generate trait-markers --levels 1,9 -o markers.jsonl",
}


def add_example(cmd: click.Command, path: str) -> click.Command:
    """``cmd`` with its example (``EXAMPLES[path]``) as the epilog, unless it has one."""
    example = EXAMPLES.get(path)
    if example and not cmd.epilog:
        lines = "\n".join(f"  {line}" for line in example.splitlines())
        cmd.epilog = f"\b\nExample:\n{lines}"
    return cmd


def format_grouped(
    names: list[str], get: dict[str, click.Command], formatter: click.HelpFormatter
) -> None:
    """Write the commands of ``psym --help`` under their group headings."""
    placed: set[str] = set()
    for heading, members, example in GROUPS:
        rows = [(n, get[n].get_short_help_str(200)) for n in members if n in get]
        placed.update(members)
        if rows:
            with formatter.section(f"{heading} (e.g. {example})"):
                formatter.write_dl(rows)
    rest = [(n, get[n].get_short_help_str(200)) for n in names if n not in placed]
    if rest:
        with formatter.section("Plugin commands"):
            formatter.write_dl(rest)
