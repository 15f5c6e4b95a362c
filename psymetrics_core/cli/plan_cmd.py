"""``psym plan``, ``psym run PLAN`` and ``psym merge DIRS``: a study spread over processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from psymetrics_core.administer.population import given_template
from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import session_of
from psymetrics_core.cli.bounded import bounded
from psymetrics_core.cli.console import progress_bar, status_lines, stderr
from psymetrics_core.cli.eval_cmd import eval_cmd, run_config
from psymetrics_core.study.executor import run_sharded
from psymetrics_core.study.merge import merge_runs
from psymetrics_core.study.plan import PlanSettings, build_plan, parse_shard, read_plan, write_plan
from psymetrics_core.study.shard import run_plan

# the `psym eval` options a plan records (same names, same help)
_PLAN_OPTIONS = (
    "tasks",
    "model",
    "model_args",
    "mode",
    "seed",
    "limit",
    "form",
    "max_new_tokens",
    "temperature",
    "items",
    "conditions",
    "design",
    "repeats",
    "norm_groups",
    "task_args",
    "data",
    "judge_model",
    "judge_model_args",
    "judge_max_new_tokens",
    "judge_batch",
    "impute",
    "population",
    "persona_template",
    "sample",
)


def _eval_params() -> list[click.Parameter]:

    return [p for p in eval_cmd.params if p.name in _PLAN_OPTIONS]


@click.command("plan", params=_eval_params())
@click.option(
    "--output",
    "-o",
    "plan_path",
    required=True,
    type=click.Path(),  # checked by base.writing: one line, '' named as given
    help="Plan file to write (JSON lines).",
)
@click.pass_context
def plan_cmd(ctx: click.Context, plan_path: str, tasks: str, **opts: Any) -> None:
    """Write the run plan of a study: one line per unit (model, task, cell, repeat, seed).

    Takes the options of `psym eval`; run the plan with `psym run PLAN [--shard i/N]`.
    With --population every respondent is a cell: shards split the respondents.
    """

    session = session_of(ctx)
    task_list = [session.task_id(t.strip()) for t in tasks.split(",") if t.strip()]
    data = opts["data"]
    opts["persona_template"] = given_template(opts["persona_template"], opts["population"])
    settings = PlanSettings.of(task_list, run_config(task_list, session, **opts))
    plan = build_plan(settings, session)
    c = settings.config
    data_files = [part for d in data for part in {d, d.partition("=")[2]} if part]
    pop_files = [str(f) for f in (c.population, c.persona_template) if f and Path(f).is_file()]
    write_plan(plan, plan_path, inputs=[*settings.item_files.values(), *data_files, *pop_files])
    click.echo(f"{plan_path}: {len(plan.units)} units, plan {plan.hash[:12]}")


@click.command("run")
@click.argument("plan_path", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--shard", default=None, metavar="i/N", help="Run only shard i of N (1-based).")
@click.option(
    "--shards",
    type=bounded("--shards"),
    default=None,
    help="With --executor: split the plan into this many shards and merge them.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="local: this process; dask: every shard as a task of a Dask cluster "
    "(pip install 'psymetrics-core[dask]').",
)
@click.option(
    "--scheduler", default=None, help="Dask scheduler address [default: a local cluster]."
)
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Run directory (a shard directory with --shard).",
)
@click.option(
    "--concurrency",
    type=bounded("--concurrency"),
    default=None,
    help="Requests in flight at once for API backends.",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache.")
@click.pass_context
def run_cmd(
    ctx: click.Context,
    plan_path: Path,
    shard: str | None,
    shards: int | None,
    executor: str,
    scheduler: str | None,
    output: Path,
    concurrency: int | None,
    no_cache: bool,
) -> None:
    """Run a plan written by `psym plan`, whole or one shard (`--shard i/N`).

    Running a killed shard again resumes it: finished responses come from the response cache.
    """

    plan = read_plan(plan_path)
    if executor != "local" or shards:
        if shard:
            raise PsymError("--shard runs one shard here; --shards/--executor run them all")

        report = run_sharded(
            plan,
            output,
            shards or 2,
            session=session_of(ctx),
            executor=executor,
            scheduler=scheduler,
            concurrency=concurrency,
            cache=not no_cache,
        )
        stderr.print(
            f"{report.units} units in {report.shards} shards merged into {output} "
            f"({report.samples} samples)"
        )
        return

    index, count = parse_shard(shard) if shard else (1, 1)
    with progress_bar() as bar, status_lines():  # the one-time model preparation, one line

        class _Reporter:
            def __init__(self, task: str, total: int) -> None:
                self.id = bar.add_task(task, total=total)

            def advance(self, n: int = 1) -> None:
                bar.advance(self.id, n)

        record = run_plan(
            plan,
            output,
            (index, count),
            session=session_of(ctx),
            concurrency=concurrency,
            cache=not no_cache,
            progress=_Reporter,
        )
    stderr.print(f"shard {index}/{count}: {len(record['units'])} units complete in {output}")


@click.command("merge")
@click.argument(
    "dirs", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True, path_type=Path)
)
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Merged run directory.",
)
@click.option("--overwrite", is_flag=True, help="Replace a run already in --output.")
@click.pass_context
def merge_cmd(ctx: click.Context, dirs: tuple[Path, ...], output: Path, overwrite: bool) -> None:
    """Merge the shard directories of one plan into one run directory."""

    report = merge_runs(list(dirs), output, session_of(ctx), overwrite=overwrite)
    stderr.print(
        f"merged {report.shards} shards: {report.units} units, {report.samples} samples "
        f"-> {output / 'results.json'}"
    )
