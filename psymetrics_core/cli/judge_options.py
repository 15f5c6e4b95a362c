"""The judge's options, one home for every command that has a judge (``psym eval``, ``psym
score``, ``psym judge``): ``--judge-model`` (alias ``--judge``), ``--judge-model-args`` and
``--judge-max-new-tokens``; the interview's ``--judge-batch`` where the command can interview.
The command receives them as its own keyword arguments (``judge_model``, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from psymetrics_core.cli.bounded import bounded

__all__ = ["judge_options"]


def judge_options(
    model_help: str, *, required: bool = False, batch: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the judge's options to a command: ``--judge-model`` (``model_help``; ``required``
    for a command that does nothing without a judge), its arguments and reply length, and with
    ``batch`` the interview's ``--judge-batch``."""
    options = [
        click.option(
            "--judge-model",
            "--judge",
            "judge_model",
            required=required,
            default=None,
            help=model_help,
        ),
        click.option("--judge-model-args", default="", help="Judge backend arguments, k=v,k=v."),
        click.option(
            "--judge-max-new-tokens",
            type=bounded("--judge-max-new-tokens"),
            default=None,
            help="Judge reply length [default: 128].",
        ),
    ]
    if batch:
        options.append(
            click.option(
                "--judge-batch",
                type=bounded("--judge-batch"),
                default=None,
                help="Interview: items per option-conversion request of the judge (1 = "
                "one item per request, for a small judge) [default: 10].",
            )
        )

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate
