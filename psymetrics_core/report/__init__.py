"""``psym report``: one self-contained, deterministic HTML file from run directories.

Figures are matplotlib SVG inlined in the page; styles and the sample search script are
inlined too, so the file makes no network request. The same runs give the same bytes.

May import: base, instruments, records, backends, contracts, pluginsys, administer, study,
analysis, export.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from psymetrics_core import __version__
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.writing import check_target, write_output
from psymetrics_core.instruments.indicators import THRESHOLDS
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.inputs import run_inputs
from psymetrics_core.records.read import RunData, load_run_data
from psymetrics_core.report.fidelity_section import fidelity_context
from psymetrics_core.report.figures import Figure
from psymetrics_core.report.sections import build_context

__all__ = ["build_report", "write_report", "load_runs_for_report"]


def _read(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    """The page template, compiled once per process (about a tenth of a second of CPU a
    report; ``build_report`` builds its context first, so bad input is refused before any
    compiling)."""
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: _read(name)),
        autoescape=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("report.html.j2")


def _figure(f: Figure) -> str:

    return Markup(
        f'<figure class="chart"><div role="img" aria-label="{escape(f.alt)}">{f.svg}</div>'
        f"<figcaption>{escape(f.caption)}</figcaption></figure>"
    )


def load_runs_for_report(paths: Sequence[str | Path], labels: Sequence[str] = ()) -> list[RunData]:
    """Load run directories; ``labels`` (optional) rename them in order; labels are unique."""
    if not paths:
        raise PsymError("give at least one run directory")
    if labels and len(labels) != len(paths):
        raise PsymError(f"--label given {len(labels)} times for {len(paths)} run directories")
    runs = [load_run_data(p, labels[i] if labels else None) for i, p in enumerate(paths)]
    seen: dict[str, int] = {}
    for r in runs:
        seen[r.label] = seen.get(r.label, 0) + 1
        if seen[r.label] > 1:
            r.label = f"{r.label}#{seen[r.label]}"
    return runs


def build_report(
    runs: Sequence[RunData],
    session: Session,
    population: PopulationOptions | None = None,
    fidelity: dict[str, Any] | None = None,
) -> str:
    """The report page for ``runs`` as a string (``session``: the installed instruments, for
    the population section of population runs; ``population``: what it computes, as in
    ``psym analyze``; ``fidelity``: the human-fidelity section's context, ``fidelity_section``)."""

    context = build_context(runs, session, population)  # a bad option is refused here
    html = _template().render(
        **context,
        fidelity=fidelity,
        version=__version__,
        thresholds=THRESHOLDS,
        css=_markup(_read("report.css")),
        js=_markup(_read("report.js")),
        figure=_figure,
    )
    return html


def _markup(text: str) -> str:

    return Markup(text)


def write_report(
    paths: Sequence[str | Path],
    output: str | Path,
    labels: Sequence[str] = (),
    *,
    session: Session,
    population: PopulationOptions | None = None,
    human: Path | None = None,
    human_groups: Sequence[str] = (),
) -> Path:
    """Write the report of ``paths`` to ``output`` (atomically, never onto a run's own record
    files nor the ``human`` file: ``base.writing``) and return its path; with ``human``, the
    section "How human-like are the answers?" compares each run with it."""
    inputs = run_inputs(paths) + ([Path(human)] if human is not None else [])
    check_target(output, inputs=inputs, what="--output", make_parents=True)  # before the work
    runs = load_runs_for_report(paths, labels)
    fidelity = fidelity_context(runs, human, human_groups, session)
    html = build_report(runs, session, population, fidelity)
    return write_output(output, html, inputs=inputs, what="--output", make_parents=True)
