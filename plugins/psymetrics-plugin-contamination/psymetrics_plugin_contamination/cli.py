"""``psym contamination``: a thin click layer over :func:`run.contamination`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from psymetrics_core.api import DEFAULT_MODEL, bounded

from .options import PROBES

__all__ = ["contamination_cmd"]


@click.group("contamination", invoke_without_command=True)
@click.option("--tasks", default=None, help="Comma-separated task ids, e.g. bfi,mfq (required).")
@click.option(
    "--probes",
    default=",".join(PROBES),
    show_default=True,
    help="Comma-separated probes to run.",
)
@click.option(
    "--permutations",
    type=bounded("--permutations"),
    default=50,
    show_default=True,
    help="Seeded permutations of the order test.",
)
@click.option("--model", default=DEFAULT_MODEL, show_default=True, help="Model backend.")
@click.option("--model-args", default="", help="Backend arguments, k=v,k=v (lm-eval style).")
@click.option(
    "--items",
    "items",
    multiple=True,
    metavar="TASK=FILE",
    help="Item texts (CSV id,text) for instruments that do not ship them (pvq40, sd3).",
)
@click.option(
    "--keywords",
    "keywords",
    multiple=True,
    metavar="[TASK=]FILE",
    help="Your keyword annotation (CSV id,keyword) instead of psymetrics' own.",
)
@click.option(
    "--option",
    "probe_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="A recorded parsing/rendering decision (see the plugin README), e.g. "
    "target_mid_rule=floor.",
)
@click.option(
    "--limit",
    type=bounded("contamination --limit"),
    default=None,
    help="Probe only the first N items per task.",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Run directory for contamination.json and samples.jsonl "
    "[default: psym-results/contamination-<timestamp>].",
)
@click.option("--overwrite", is_flag=True, help="Replace a run already in --output.")
@click.option(
    "--resume",
    is_flag=True,
    help="Repeat the run in --output (answers already paid for come from the cache).",
)
@click.option("--json", "as_json", is_flag=True, help="Print contamination.json, not a table.")
@click.pass_context
def contamination_cmd(
    ctx: click.Context,
    tasks: str | None,
    probes: str,
    permutations: int,
    model: str,
    model_args: str,
    items: tuple[str, ...],
    keywords: tuple[str, ...],
    probe_options: tuple[str, ...],
    limit: int | None,
    no_cache: bool,
    output: Path | None,
    overwrite: bool,
    resume: bool,
    as_json: bool,
) -> None:
    """Has the model seen this test? Contamination probes of Han et al. (2025), an order test
    (Oren et al., 2023) with positive controls, bootstrap intervals and an index.

    `psym contamination tables RUN...` lays several runs out as the paper's tables."""
    if ctx.invoked_subcommand is not None:
        return
    if not tasks:
        raise click.UsageError("Missing option '--tasks'.")
    from datetime import datetime

    from psymetrics_core.api import (
        parse_items_option,
        print_json,
        progress_bar,
        session_of,
        stderr,
    )

    from .keywords import parse_keywords_option
    from .options import parse_probe_options, parse_probes
    from .report import print_tables
    from .run import contamination

    task_list = [t.strip() for t in tasks.split(",") if t.strip()]
    probe_list = parse_probes(probes)
    opts = parse_probe_options(probe_options)
    kw_files = parse_keywords_option(keywords, task_list)
    if output is None:
        output = Path("psym-results") / datetime.now().strftime("contamination-%Y%m%d-%H%M%S")
    with progress_bar() as bar:  # contamination() claims the output

        class _Reporter:
            def __init__(self, task: str, total: int) -> None:
                self.id = bar.add_task(task, total=total)

            def advance(self, n: int = 1) -> None:
                bar.advance(self.id, n)

        report: dict[str, Any] = contamination(
            task_list,
            probes=probe_list,
            model=model,
            model_args=model_args,
            permutations=permutations,
            options=opts,
            item_files=parse_items_option(items),
            keyword_files=kw_files,
            output=output,
            overwrite=overwrite,
            resume=resume,
            limit=limit,
            cache=not no_cache,
            progress=_Reporter,
            session=session_of(ctx),
        )
    if as_json:
        print_json(report)
        return
    print_tables(report)
    stderr.print(f"results: {output / 'contamination.json'}   samples: {output / 'samples.jsonl'}")


@contamination_cmd.command("tables")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="A .md (Markdown, the paper's rounding) or .csv (unrounded) file "
    "[default: Markdown on stdout].",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="Row label of each run, in order (default: the model each run recorded).",
)
def tables_cmd(runs: tuple[Path, ...], output: Path | None, labels: tuple[str, ...]) -> None:
    """Lay several `psym contamination` runs (one per model, same --tasks) out as Han et al.'s
    tables: Table 1 (model means over the instruments), Table 2 (instrument means over the
    models) and one table per instrument (Tables 3-6)."""
    from psymetrics_core.api import stderr, stdout

    from .tables import load_runs, output_format, paper_tables, render, run_inputs, write_output

    fmt = output_format(output)
    loaded = load_runs(runs, labels)
    text = render(paper_tables(loaded), loaded, fmt)
    if output is None:
        stdout.print(text, markup=False, highlight=False, soft_wrap=True)
        return
    write_output(output, text, run_inputs(loaded))
    stderr.print(f"tables of {len(loaded)} run(s): {output}")
