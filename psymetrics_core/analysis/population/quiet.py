"""Third-party warnings held back during the population analyses.

semopy logs "Sample covariance matrix is not PD" on the root logger, numpy warns
"invalid value encountered" on constant items, statsmodels warns on a non-converged EFA: each
analysis already gives its own reason (``reason`` fields, shown beside the undefined number),
so these lines would only repeat it beside psym's reason, in another library's words.
``quiet_analysis`` wraps one analysis (a decorator): warnings and numpy floating-point
warnings are ignored and log records below ERROR are dropped while it runs.
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

import numpy as np

__all__ = ["quiet", "quiet_analysis"]

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def quiet() -> Iterator[None]:
    """Hold back third-party warnings and warning-level log records (see the module)."""
    before = logging.root.manager.disable
    logging.disable(max(before, logging.WARNING))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(before)


def quiet_analysis(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run under :func:`quiet`."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with quiet():
            return fn(*args, **kwargs)

    return wrapper
