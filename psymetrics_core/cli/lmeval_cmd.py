"""``psym lm-eval ARGS...``: run lm-evaluation-harness with psymetrics' tasks on the path."""

from __future__ import annotations

import sys

import click

from psymetrics_core.cli import session_of
from psymetrics_core.export.lm_eval_cli import run_lm_eval


@click.command(
    "lm-eval",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def lmeval_cmd(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Run `lm_eval ARGS` with every installed instrument exported on --include_path.

    All arguments go to lm_eval unchanged (e.g. --model hf --model_args ... --tasks psym_bfi
    --apply_chat_template); an --include_path of your own is kept and searched after ours.
    """

    sys.exit(run_lm_eval(list(args), session_of(ctx)))
