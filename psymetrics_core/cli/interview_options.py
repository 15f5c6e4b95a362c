"""``--impute``: how an interview judge's "none" is scored (``psym eval``, ``psym judge``)."""

from __future__ import annotations

from typing import Any

import click

__all__ = ["impute_option", "rejudge_impute_option"]

_CHOICES = click.Choice(["none", "midpoint"])
_WHAT = (
    "Interview runs: score a judge's 'none' (or unread rating) as the midpoint, as "
    "InCharacter did (Wang et al., 2024), recorded; none leaves it missing"
)


def _none_is_none(_ctx: click.Context, _param: click.Parameter, value: Any) -> str | None:
    return None if value in (None, "none") else str(value)


impute_option = click.option(
    "--impute",
    type=_CHOICES,
    default="none",
    show_default=True,
    callback=_none_is_none,
    help=_WHAT + ".",
)

rejudge_impute_option = click.option(
    "--impute",
    type=_CHOICES,
    default=None,
    help=_WHAT + " [default: as the run did].",
)
