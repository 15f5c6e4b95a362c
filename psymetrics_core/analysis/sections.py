"""The sections of ``psym analyze``: every analysis registered with ``register_analyses``, the
core's and the plugins' alike, run on one ``AnalysisRequest``.

The core registers its own analyses through the same hook as a plugin (``analysis.builtin``:
the per-run tables, ecological validity, population psychometrics), so the registry
(``Session.analyses()``) holds them all, with the one clash policy of every registry
(``pluginsys.registries``: the core's entry wins over a plugin's, else the first registered;
one line naming both). A plugin's analysis that crashes is reported on one line and left out,
so it cannot take ``psym analyze`` down; a ``PsymError`` (bad input) is the user's error and
stops the command with its one-line message; the core's own analyses are not contained (a bug of
the core keeps its traceback).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from psymetrics_core.base.errors import PsymError
from psymetrics_core.contracts.analyses import AnalysisSection

if TYPE_CHECKING:  # annotations only: the population analyses import scipy (about 1.5 s)
    from psymetrics_core.analysis.population.options import PopulationOptions
    from psymetrics_core.analysis.population.runs import PreparedRuns
    from psymetrics_core.pluginsys.session import Session

__all__ = ["AnalysisRequest", "AnalysisSection", "run_analyses"]


@dataclass(frozen=True)
class AnalysisRequest:
    """What ``psym analyze`` hands every registered analysis: ``analyse(request)``.

    ``run_dirs`` are the run directories; ``session`` holds the installed instruments;
    ``labels`` is the ``--labels`` file (or None); ``reference`` the ``--reference`` condition
    the user gave, None for the default (each analysis has its own: ``original`` for answer
    consistency, ``neutral`` for the projective tests). The rest are the options of the core's
    analyses (``psym analyze --help``): ``nan_policy``, ``baseline``, ``fence_k`` and
    ``hypotheses`` of the per-run tables, ``deletion`` (``--missing``) and ``population`` (what
    the population section computes); ``population_ready``: the population runs as read when
    ``psym analyze`` checked those options (the section reads them once), or None.
    """

    run_dirs: tuple[Path, ...]
    session: Session
    labels: Path | None = None
    reference: str | None = None
    nan_policy: str = "match"
    baseline: Path | None = None
    fence_k: float = 1.5
    hypotheses: tuple[str, ...] = ()
    deletion: str = "listwise"
    population: PopulationOptions | None = None
    population_ready: PreparedRuns | None = None


def run_analyses(
    request: AnalysisRequest, warn: Callable[[str], None] | None = None
) -> dict[str, AnalysisSection]:
    """Registered name -> section of every analysis of ``request.session`` that has one for
    the runs (``None`` results left out), in the registry's order.

    ``warn`` is called with one line when a plugin's analysis fails with an unexpected
    exception or returns something that is not an ``AnalysisSection``.
    """
    out: dict[str, AnalysisSection] = {}
    for name, entry in request.session.analyses().items():
        try:
            section = entry.function()(request)
        except PsymError:
            raise
        except Exception as exc:  # a broken plugin never takes the command down
            if entry.builtin:
                raise
            _say(warn, f"analysis '{name}' of plugin '{entry.plugin}' failed: {exc!r}; left out")
            continue
        if section is None:
            continue
        if not isinstance(section, AnalysisSection):
            _say(
                warn,
                f"analysis '{name}' of plugin '{entry.plugin}' returned "
                f"{type(section).__name__}, not an AnalysisSection; left out",
            )
            continue
        out[name] = section
    return out


def _say(warn: Callable[[str], None] | None, line: str) -> None:
    if warn is not None:
        warn(line)
