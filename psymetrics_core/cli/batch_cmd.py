"""``psym batch submit|status|collect``: a plan through the OpenAI Batch API."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.cli import session_of
from psymetrics_core.study.batch import collect, status, submit
from psymetrics_core.study.plan import read_plan

_DIR = click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
_PLAN = click.argument("plan_path", type=click.Path(dir_okay=False, exists=True, path_type=Path))


@click.group("batch")
def batch_cmd() -> None:
    """Send a plan's requests as one OpenAI Batch API job and cache the answers."""


@batch_cmd.command("submit")
@_PLAN
@_DIR
@click.pass_context
def submit_cmd(ctx: click.Context, plan_path: Path, directory: Path) -> None:
    """Upload the plan's uncached requests and create a batch; state goes to DIRECTORY."""

    state = submit(read_plan(plan_path), directory, session_of(ctx))
    click.echo(f"batch {state.batch_id}: {state.requests} requests, {state.status}")


@batch_cmd.command("status")
@_DIR
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True, max=86_400),
    default=None,
    help="Seconds the request may take in all [default: 120, the backend's timeout].",
)
def status_cmd(directory: Path, timeout: float | None) -> None:
    """Ask the server how far the batch is."""

    state, info = status(directory, timeout=timeout)
    counts = info.request_counts
    done = f" ({counts.completed}/{counts.total or state.requests} done)" if counts else ""
    click.echo(f"batch {state.batch_id}: {state.status}{done}")


@batch_cmd.command("collect")
@_PLAN
@_DIR
@click.pass_context
def collect_cmd(ctx: click.Context, plan_path: Path, directory: Path) -> None:
    """Download a completed batch into the response cache (then `psym run PLAN` is free)."""

    stored, failed = collect(read_plan(plan_path), directory, session_of(ctx))
    note = f"; {failed} failed (asked again online by `psym run`)" if failed else ""
    click.echo(f"stored {stored} responses in the response cache{note}")
