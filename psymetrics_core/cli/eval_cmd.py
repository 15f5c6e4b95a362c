"""``psym eval``: administer tasks to a model and print scale scores."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from psymetrics_core.administer.config import RunConfig
from psymetrics_core.administer.options import parse_task_args
from psymetrics_core.administer.preflight import check_label
from psymetrics_core.administer.runner import evaluate
from psymetrics_core.cli import session_of
from psymetrics_core.cli.bounded import bounded
from psymetrics_core.cli.console import fmt, print_json, progress_bar, stderr, stdout, table
from psymetrics_core.instruments.indicators import warnings_of
from psymetrics_core.instruments.item_texts import parse_items_option
from psymetrics_core.instruments.norms import parse_norm_group_option
from psymetrics_core.records.rundir import claim_run_dir

if TYPE_CHECKING:
    from psymetrics_core.administer.config import RunConfig
    from psymetrics_core.pluginsys.session import Session


@click.command("eval")
@click.option("--tasks", required=True, help="Comma-separated task ids, e.g. bfi,mfq.")
@click.option(
    "--model",
    default="smollm2",
    show_default=True,
    help="Backend name (see `psym plugins`); default: SmolLM2 on CPU.",
)
@click.option("--model-args", default="", help="Backend arguments, k=v,k=v (lm-eval style).")
@click.option(
    "--mode",
    type=click.Choice(["generate", "logprob"]),
    default="generate",
    show_default=True,
    help="Generate text and parse it, or score options' likelihood.",
)
@click.option("--seed", type=bounded("--seed"), default=1234, show_default=True)
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
@click.option(
    "--judge-model", default=None, help="Backend of the judge model [default: the --model]."
)
@click.option("--judge-model-args", default="", help="Judge backend arguments, k=v,k=v.")
@click.option(
    "--judge-max-new-tokens",
    type=bounded("--judge-max-new-tokens"),
    default=None,
    help="Judge generation length [default: 128].",
)
@click.option(
    "--label",
    default=None,
    callback=lambda _c, _p, v: _label(v),
    help="Name of the model in results, tables, exports and reports [default: --model]; "
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
@click.pass_context
def eval_cmd(ctx: click.Context, tasks: str, as_json: bool, **opts: Any) -> None:
    """Administer instruments to a model and report scale scores with parse rates."""

    output: Path = opts["output"] or _fresh_dir(
        Path("psym-results") / datetime.now().strftime("%Y%m%d-%H%M%S")
    )
    task_list = [t.strip() for t in tasks.split(",") if t.strip()]
    session = session_of(ctx)
    config = run_config(task_list, session, **{**opts, "output": output})
    if config.repeats > 1 and config.temperature == 0 and config.mode == "generate":
        stderr.print(
            "[yellow]note:[/yellow] --repeats at --temperature 0 (greedy) repeat the same "
            "answers except where a condition is seeded (permuted-options, item-order-shuffle)"
        )
    claim = claim_run_dir(output, overwrite=config.overwrite, resume=config.resume)
    with claim, progress_bar() as bar:

        class _Reporter:
            def __init__(self, task: str, total: int) -> None:
                self.id = bar.add_task(task, total=total)

            def advance(self, n: int = 1) -> None:
                bar.advance(self.id, n)

        results = evaluate(task_list, config, progress=_Reporter, session=session)
    if as_json:
        print_json(results)
        return
    _print_table(results)
    stderr.print(f"results: {output / 'results.json'}   samples: {output / 'samples.jsonl'}")


def run_config(task_list: list[str], session: Session, **opts: Any) -> RunConfig:
    """The ``RunConfig`` of ``psym eval``'s options (``opts``: click's parameters but --tasks
    and --json): the run records its ``--label`` (default: the model) and its provenance."""

    task_options = parse_task_args(
        opts.pop("task_args"), task_list, opts.pop("data"), session=session
    )
    return RunConfig(
        task_options=task_options,
        item_files=parse_items_option(opts.pop("items")),
        norm_group=parse_norm_group_option(opts.pop("norm_groups")),
        cache=not opts.pop("no_cache"),
        label=opts.pop("label") or opts["model"],
        provenance=True,
        **opts,
    )


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
        for r in runs:
            t.add_row(
                r["condition"], str(r["seed"]), *(fmt(r["scales"][s]["score"]) for s in scales)
            )
        stdout.print(t)


def _model_name(results: dict[str, Any]) -> str:
    label = results.get("label")
    return (
        results["model"]
        if not label or label == results["model"]
        else (f"{label} ({results['model']})")
    )


def _print_table(results: dict[str, Any]) -> None:
    t = table(
        f"model: {_model_name(results)}  mode: {results['settings']['mode']}  "
        f"seed: {results['seed']}",
        ["task", "scale", "score", "items answered", "z (norm) / 95% CI"],
    )
    notes: list[str] = []
    for task, entry in results["tasks"].items():
        for i, (scale, s) in enumerate(entry["scales"].items()):
            t.add_row(
                task if i == 0 else "",
                scale,
                fmt(s["score"]) + (" *" if s.get("reason") else ""),
                f"{s['n_answered']}/{s['n_items']}",
                _last_cell(s),
            )
            if s.get("reason"):
                notes.append(f"* {task}.{scale}: {s['reason']}")
        rate = entry.get("parse_rate")
        t.add_row(
            "",
            "[dim]parse rate[/dim]",
            "—" if rate is None else f"{100 * rate:.0f}%",
            f"[dim]{entry['n_answered']}/{entry['n_items']} parsed, "
            f"{entry['n_unparsed']} unparsed, {entry['n_refused']} refused[/dim]",
            end_section=True,
        )
    stdout.print(t)
    for line in notes:
        stdout.print(line, markup=False, soft_wrap=True)
    _print_indicators(results)
    _print_runs(results)


def _last_cell(s: dict[str, Any]) -> str:
    """z against the norm group, or a score's interval (flagged when built on an empty cell)."""
    if "norm" in s:
        return f"{fmt(s['z'])} ({s['norm']['group']})"
    if s.get("ci_low") is not None and s.get("ci_high") is not None:
        flag = (
            " [bold yellow]empty cell[/bold yellow]"
            if (s.get("detail") or {}).get("empty_cells")
            else ""
        )
        return f"[{fmt(s['ci_low'])}, {fmt(s['ci_high'])}]{flag}"
    return ""


_SHOWN = ("straight_lining", "acquiescence", "reverse_keyed_inconsistency", "parse_rate")
_SHORT = {
    "straight_lining": "straight-lining",
    "acquiescence": "acquiescence",
    "reverse_keyed_inconsistency": "reverse-key gap",
    "parse_rate": "parse rate",
    "judge_parse_rate": "judge parse rate",
    "option_order_sensitivity": "option-order shift",
}


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
    t = table(
        "validity indicators (! = beyond its threshold; see README)",
        ["task", *(_SHORT.get(n, n) for n in names + extra)],
    )
    for task, ind in rows:
        t.add_row(task, *(_indicator_cell(ind.get(n)) for n in names + extra))
    stdout.print(t)
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
