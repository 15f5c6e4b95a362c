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
from psymetrics_core.administer.ranges import range_text, scale_ranges
from psymetrics_core.administer.runner import evaluate
from psymetrics_core.backends.base import parse_model_args
from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli import session_of
from psymetrics_core.cli.bounded import bounded
from psymetrics_core.cli.cache_note import cache_note
from psymetrics_core.cli.console import (
    add_rows,
    fmt,
    print_json,
    progress_bar,
    status_lines,
    stderr,
    stdout,
    table,
)
from psymetrics_core.cli.interview_options import impute_option
from psymetrics_core.cli.judge_options import judge_options
from psymetrics_core.cli.population_screen import model_name, print_population
from psymetrics_core.cli.stated_screen import print_stated
from psymetrics_core.instruments.indicators import (
    SHORT_NAMES,
    degenerate_sentence,
    n_scored,
    warnings_of,
)
from psymetrics_core.instruments.item_texts import parse_items_option
from psymetrics_core.instruments.norms import parse_norm_group_option
from psymetrics_core.pluginsys.backend_hints import DEFAULT_MODEL
from psymetrics_core.records.population_summary import fired, is_population_run

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
        _print_table(results, session)
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


def _print_runs(results: dict[str, Any]) -> None:
    """Scores per (condition, repeat) when more than one run was made."""
    for task, entry in results["tasks"].items():
        runs = entry.get("runs") or []
        if len(runs) < 2:
            continue
        scales = list(runs[0]["scales"])
        t = table(f"{task}: scores per condition and repeat", ["condition", "seed", *scales])
        rows = (
            [r["condition"], str(r["seed"]), *(fmt(r["scales"][s]["score"]) for s in scales)]
            for r in runs
        )
        add_rows(t, rows, "results.json, runs")
        stdout.print(t)


def _print_table(results: dict[str, Any], session: Session) -> None:
    tasks = results["tasks"]
    scales = [(task, name, s) for task, e in tasks.items() for name, s in e["scales"].items()]
    has_z = any("norm" in s for _, _, s in scales)
    has_ci = any(s.get("ci_low") is not None for _, _, s in scales)
    invalid = {task for task, e in tasks.items() if fired(e.get("indicators"))}
    ranges = scale_ranges(results, session)
    if (cell := _first_cell(tasks)) is not None:
        stdout.print(cell, markup=False, soft_wrap=True)
    t = table(
        f"model: {model_name(results)}  mode: {results['settings']['mode']}  "
        f"seed: {results['seed']}",
        ["task", "scale", "score (range)", "answered"]
        + (["z vs norm"] if has_z else [])
        + (["95% CI"] if has_ci else []),
    )
    t.columns[1].min_width = max((len(name) for _, name, _ in scales), default=5)  # whole names
    notes: list[str] = []
    for task, entry in tasks.items():
        normed = any("norm" in s for s in entry["scales"].values())
        for i, (scale, s) in enumerate(entry["scales"].items()):
            score = fmt(s["score"]) + (" *" if s.get("reason") else "")
            if (task, scale) in ranges:
                score += f" [dim]({range_text(ranges[task, scale])})[/dim]"
            if task in invalid and s["score"] is not None:
                score += " [bold yellow]![/bold yellow]"
            row = [task if i == 0 else "", scale, score, f"{s['n_answered']}/{s['n_items']}"]
            if has_z:
                row.append(_z_cell(s, normed, first=i == 0))
            if has_ci:
                row.append(_ci_cell(s))
            t.add_row(*row)
            if s.get("reason"):
                notes.append(f"* {task}.{scale}: {s['reason']}")
        if entry.get("scoring_note"):  # a task's own line on how its scores read
            notes.append(f"{task}: {entry['scoring_note']}")
        rate = entry.get("parse_rate")
        t.add_row(
            "",
            "[dim]parse rate[/dim]",
            "—" if rate is None else f"{100 * rate:.0f}%",
            f"[dim]{entry['n_answered']}/{entry['n_items']} parsed, "
            f"{entry['n_unparsed']} unparsed, {entry['n_refused']} refused[/dim]",
            *([""] * (has_z + has_ci)),
            end_section=True,
        )
    stdout.print(t)
    for line in _norm_legend(tasks) + notes:
        stdout.print(line, markup=False, soft_wrap=True)
    for task in invalid:
        e = tasks[task]
        sentence = degenerate_sentence(task, n_answered=e.get("n_answered"), n_scored=n_scored(e))
        stdout.print(f"[bold yellow]![/bold yellow] {sentence}", soft_wrap=True)
    _print_indicators(results)
    _print_runs(results)


def _first_cell(tasks: dict[str, Any]) -> str | None:
    """The label of the score table when a task made several runs (condition levels or
    repeats): its scores are the first run's, named by its condition level (the report's first
    column, "original" when that ran first) and seed."""
    for e in tasks.values():
        runs = e.get("runs") or []
        if len(runs) > 1:
            return (
                f"scores of the first run: condition {runs[0].get('condition')}, seed "
                f"{runs[0].get('seed')} (of {len(runs)} runs; every run: the table of scores "
                "per condition and repeat below)"
            )
    return None


def _z_cell(s: dict[str, Any], normed: bool, *, first: bool) -> str:
    """z against the scale's human norm group, or why there is none."""
    if "norm" in s:
        return f"{fmt(s['z'])} vs {s['norm']['group']}"
    if not normed:
        return "[dim]no human norms[/dim]" if first else ""
    return "[dim]—[/dim]"


def _ci_cell(s: dict[str, Any]) -> str:
    """A score's 95% interval (flagged when built on an empty cell)."""
    if s.get("ci_low") is None or s.get("ci_high") is None:
        return ""
    flag = (
        " [bold yellow]empty cell[/bold yellow]"
        if (s.get("detail") or {}).get("empty_cells")
        else ""
    )
    return f"[{fmt(s['ci_low'])}, {fmt(s['ci_high'])}]{flag}"


def _norm_legend(tasks: dict[str, Any]) -> list[str]:
    """One line per task and norm group: the group named in full, with its source and size."""
    lines = []
    for task, entry in tasks.items():
        seen = {}
        for s in entry["scales"].values():
            norm = s.get("norm")
            if norm and norm["group"] not in seen:
                seen[norm["group"]] = norm
        for group, norm in seen.items():
            size = f"n = {norm['n']:,}" if norm.get("n") else "n not reported"
            lines.append(f'human norm {task} "{group}": {norm.get("source", "")} ({size})')
    return lines


_SHOWN = ("straight_lining", "acquiescence", "reverse_keyed_inconsistency", "parse_rate")


def _print_indicators(results: dict[str, Any]) -> None:
    """Validity indicators of each questionnaire task, then one warning line per fired one."""

    rows = [(task, e["indicators"]) for task, e in results["tasks"].items() if e.get("indicators")]
    if not rows:
        return
    names = [n for n in _SHOWN if any(n in ind for _, ind in rows)]
    extra = [
        n
        for n in ("judge_parse_rate", "option_order_sensitivity")
        if any(n in ind for _, ind in rows)
    ]
    # the title stays one line on the narrowest table (one task, one column: sct's judge parse
    # rate); the legend goes under the table, where the terminal wraps it like any text
    t = table("validity indicators", ["task", *(SHORT_NAMES.get(n, n) for n in names + extra)])
    for task, ind in rows:
        t.add_row(task, *(_indicator_cell(ind.get(n)) for n in names + extra))
    stdout.print(t)
    stdout.print("! = beyond its threshold (docs: guides/report.md)", markup=False, soft_wrap=True)
    for task, ind in rows:
        for line in warnings_of(ind):
            stdout.print(f"[bold yellow]warning[/bold yellow] {task}: {line}", soft_wrap=True)


def _indicator_cell(ind: dict[str, Any] | None) -> str:
    if not ind:
        return ""
    if ind.get("value") is None:
        return "[dim]—[/dim]"
    text = f"{ind['value']:.2f}"
    return f"[bold yellow]{text} ![/bold yellow]" if ind["fired"] else text
