"""Click types built from ``psymetrics_core.base.bounds``: a numeric option's range is declared
once, shown in ``--help`` (e.g. ``[default: 1; 1<=x<=1000]``) and an out-of-range or malformed
value is refused as one ``psym: error:`` line naming the option, the value and the bound
(``--repeats must be an integer in 1-1000, got 100000000``)."""

from __future__ import annotations

import math
from typing import Any

import click

from psymetrics_core.base.bounds import Bound, bound
from psymetrics_core.base.errors import PsymError

__all__ = ["bounded"]


def _refuse(b: Bound, value: Any, param: click.Parameter | None) -> PsymError:
    name = param.opts[0] if param is not None and param.opts else b.name
    return PsymError(b.message(value, name))


class _IntBound(click.IntRange):
    def __init__(self, b: Bound) -> None:
        super().__init__(int(b.lo), int(b.hi))
        self.bound = b

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            raise _refuse(self.bound, value, param) from None


class _FloatBound(click.FloatRange):
    """Also refuses nan, which compares false with both ends of a ``FloatRange``."""

    def __init__(self, b: Bound) -> None:
        super().__init__(b.lo, b.hi)
        self.bound = b

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            number = super().convert(value, param, ctx)
        except click.BadParameter:
            raise _refuse(self.bound, value, param) from None
        if not math.isfinite(number):
            raise _refuse(self.bound, value, param)
        return number


def bounded(name: str) -> click.ParamType:
    """The click type of the option whose bound ``name`` declares (see ``base/bounds.py``)."""
    b = bound(name)
    return _IntBound(b) if b.integer else _FloatBound(b)
