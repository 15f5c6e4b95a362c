"""``psym eval``: administer tasks to a model and print scale scores."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from psymetrics_core.administer.config import RunConfig
from psymetrics_core.administer.distribution import is_verbalized_only
from psymetrics_core.administer.options import parse_task_args
from psymetrics_core.administer.population import given_template, persona_conditions
from psymetrics_core.administer.preflight import check_label
from psymetrics_core.administer.ranges import scale_ranges
from psymetrics_core.administer.runner import evaluate
from psymetrics_core.backends.base import parse_model_args
from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import session_of
from psymetrics_core.cli.bounded import bounded
from psymetrics_core.cli.cache_note import cache_note
from psymetrics_core.cli.console import (
    print_json,
    progress_bar,
    status_lines,
    stderr,
    stdout,
    table,
)
from psymetrics_core.cli.eval_table import print_table
from psymetrics_core.cli.interview_options import impute_option
from psymetrics_core.cli.judge_options import judge_options
from psymetrics_core.cli.population_screen import print_population
from psymetrics_core.cli.stated_screen import print_stated
from psymetrics_core.instruments.item_texts import parse_items_option
from psymetrics_core.instruments.norms import parse_norm_group_option
from psymetrics_core.pluginsys.backend_hints import DEFAULT_MODEL
from psymetrics_core.records.population_summary import is_population_run

if TYPE_CHECKING:
    from psymetrics_core.administer.config import RunConfig
    from psymetrics_core.pluginsys.session import Session


@click.command("eval")
@click.option("--tasks", required=True, help="Comma-separated task ids, e.g. bfi,mfq.")
@click.option(
    "--model",
    default=DEFAULT_MODEL,
    show_default=True,
    help="Backend name: smollm2 (default, SmolLM2 on CPU), hf, openai-chat, "
    "openai-completions, lm-eval:NAME (`psym plugins --backends`).",
)
@click.option(
    "--model-args",
    default="",
    help="Backend arguments, k=v,k=v (lm-eval style), e.g. base_url=URL,model=NAME for "
    "openai-chat; `psym plugins --backends` lists every backend's keys.",
)
@click.option(
    "--mode",
    type=click.Choice(["generate", "logprob"]),
    default="generate",
    show_default=True,
    help="Generate text and parse it, or score options' likelihood.",
)
@click.option(
    "--seed",
    type=bounded("--seed"),
    default=1234,
    show_default=True,
    help="Seed of sampling, seeded conditions and --sample (repeat r uses SEED+r).",
)
@click.option(
    "--limit",
    type=bounded("--limit"),
    default=None,
    help="Administer only the first N items per task.",
)
@click.option("--form", default="original", show_default=True, help="Instrument form.")
@click.option(
    "--max-new-tokens",
    type=bounded("--max-new-tokens"),
    default=None,
    help="Generation length [default: 24; behaviour tasks use their own].",
)
@click.option(
    "--temperature",
    type=bounded("--temperature"),
    default=0.0,
    show_default=True,
    help="0 = greedy decoding.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run directory for results.json and samples.jsonl [default: psym-results/<timestamp>].",
)
@click.option(
    "--items",
    "items",
    multiple=True,
    metavar="TASK=FILE",
    help="Item texts (CSV id,text) for a task that does not ship them; repeatable.",
)
@click.option(
    "--condition",
    "conditions",
    multiple=True,
    metavar="NAME[=ARG]",
    help="Administration condition (repeatable; see `psym eval --list-conditions`). "
    "Conditions of different facets are crossed; A+B composes one cell.",
)
@click.option(
    "--design",
    type=click.Choice(["grid", "each"]),
    default="grid",
    show_default=True,
    help="grid: every combination across facets; each: every --condition on its own.",
)
@click.option(
    "--repeats",
    type=bounded("--repeats"),
    default=1,
    show_default=True,
    help="Seeded repetitions per condition (seeds SEED, SEED+1, ...).",
)
@click.option(
    "--population",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A population file (`psym population build`): every cell is run once per respondent, "
    "the persona first in the system prompt.",
)
@click.option(
    "--persona-template",
    default=None,
    help="With --population: how a persona is put to the model: jung, serapio-garcia, "
    "psychobench, genpt, plain, or a Jinja2 file ({{ persona }}, {{ id }}, {{ labels.FIELD }}) "
    "[default: jung].",
)
@click.option(
    "--sample",
    type=click.IntRange(1, 100_000),
    default=None,
    help="With --population: a seeded sample of N respondents (1-100,000).",
)
@click.option(
    "--list-conditions",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=lambda ctx, _p, v: _list_conditions(ctx) if v else None,
    help="List the registered conditions and exit.",
)
@click.option(
    "--norm-group",
    "norm_groups",
    multiple=True,
    metavar="[TASK=]NAME",
    help="Human norm group for z-scores (see `psym show TASK`); default: each task's first.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Neither read nor write the response cache (see `psym cache info`).",
)
@click.option(
    "--concurrency",
    type=bounded("--concurrency"),
    default=None,
    help="Requests in flight at once for API backends [default: the backend's, 8].",
)
@click.option(
    "--task-arg",
    "task_args",
    multiple=True,
    metavar="TASK.KEY=VALUE",
    help="An option for one task, e.g. housing.data=table.csv; repeatable.",
)
@click.option(
    "--data",
    "data",
    multiple=True,
    metavar="[TASK=]PATH",
    help="Data file of a behaviour task (= --task-arg TASK.data=PATH); repeatable.",
)
@judge_options("Backend of the judge model [default: the --model].", batch=True)
@click.option(
    "--label",
    default=None,
    callback=lambda _c, _p, v: _label(v),
    help="Name of the model in results, tables, exports and reports [default: the model= of "
    "--model-args (an API's model name), else --model]; "
    "no path separators or control characters.",
)
@click.option(
    "--overwrite", is_flag=True, help="Replace the run already in --output (default: refuse)."
)
@click.option(
    "--resume",
    is_flag=True,
    help="Repeat the run already in --output; the response cache answers what was paid for.",
)
@click.option("--json", "as_json", is_flag=True, help="Print results.json instead of a table.")
@impute_option
@click.pass_context
def eval_cmd(ctx: click.Context, tasks: str, as_json: bool, **opts: Any) -> None:
    """Administer instruments to a model and report scale scores with parse rates."""

    output: Path = opts["output"] or _fresh_dir(
        Path("psym-results") / datetime.now().strftime("%Y%m%d-%H%M%S")
    )
    session = session_of(ctx)
    task_list = [session.task_id(t.strip()) for t in tasks.split(",") if t.strip()]
    opts["persona_template"] = given_template(opts["persona_template"], opts["population"])
    config = run_config(task_list, session, **{**opts, "output": output})
    if config.repeats > 1 and config.temperature == 0 and config.mode == "generate":
        stderr.print(
            "[yellow]note:[/yellow] --repeats at --temperature 0 (greedy) repeat the same "
            "answers except where a condition is seeded (permuted-options, item-order-shuffle)"
        )
    if config.population is not None:
        for arg in persona_conditions(config.condition_args(), session):
            stderr.print(
                f"warning: --condition {arg} with --population: every respondent's system "
                "prompt gets both personas (this condition's first, then the respondent's)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    with progress_bar() as bar, status_lines():  # evaluate claims the output

        class _Reporter:
            def __init__(self, task: str, total: int) -> None:
                self.id = bar.add_task(task, total=total)

            def advance(self, n: int = 1) -> None:
                bar.advance(self.id, n)

        results = evaluate(task_list, config, progress=_Reporter, session=session)
    if as_json:
        print_json(results)
        return
    population = is_population_run(results)
    if population:
        print_population(results, config, scale_ranges(results, session))
    elif not is_verbalized_only(results):  # a verbalized run has distributions, not scores
        print_table(results, session)
    print_stated(results, output)
    if (note := cache_note(results)) is not None:
        stderr.print(note, markup=False, highlight=False, soft_wrap=True)
    stderr.print(
        f"results: {output / 'results.json'}   samples: {output / 'samples.jsonl'}",
        soft_wrap=True,
    )
    after = f"psym analyze {output} (the population psychometrics), then " if population else ""
    stderr.print(
        f"next: {after}psym report {output} -o report.html",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def run_config(task_list: list[str], session: Session, **opts: Any) -> RunConfig:
    """The ``RunConfig`` of ``psym eval``'s options (``opts``: click's parameters but --tasks
    and --json; ``psym plan`` passes the subset a plan records): the run records its
    ``--label`` (default: the model) and its provenance. The one place the command line
    becomes a run's configuration, for ``psym eval`` and ``psym plan``."""

    task_options = parse_task_args(
        opts.pop("task_args"), task_list, opts.pop("data"), session=session
    )
    return RunConfig(
        task_options=task_options,
        item_files=parse_items_option(opts.pop("items")),
        norm_group=parse_norm_group_option(opts.pop("norm_groups")),
        cache=not opts.pop("no_cache", False),
        label=opts.pop("label", None) or _default_label(opts["model"], opts["model_args"]),
        provenance=True,
        **opts,
    )


def _default_label(model: str, model_args: str) -> str:
    """The run's label when ``--label`` is not given: the served model's name (``model=`` of
    ``--model-args``, e.g. openai-chat's) so that two API models in one report differ, else
    ``--model``; a name that is not a valid label falls back to ``--model``."""
    try:
        name = parse_model_args(model_args).get("model", "")
        return check_label(name) if name else model
    except PsymError:
        return model


def _label(value: str | None) -> str | None:
    """``--label``, checked before anything runs (``preflight.check_label``)."""

    return None if value is None else check_label(value)


def _fresh_dir(base: Path) -> Path:
    """``base``, or ``base-2``, ``base-3``, ... when a run already took that name."""
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def _list_conditions(ctx: click.Context) -> None:
    t = table("conditions", ["name", "facet", "description", "plugin"])
    for name, e in sorted(session_of(ctx).conditions().items()):
        t.add_row(name + ("=ARG" if e.takes_argument else ""), e.facet, e.description, e.plugin)
    stdout.print(t)
    ctx.exit(0)
