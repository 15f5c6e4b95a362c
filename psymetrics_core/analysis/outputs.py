"""What ``psym analyze RUN_DIR...`` computes and writes: the report of every registered analysis
(``sections.run_analyses``: the per-run tables as its body, the other sections under
``sections``), and ``analysis.json`` with the flat CSV tables."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from psymetrics_core.analysis.builtin import PER_RUN
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.population.runs import check_population_options
from psymetrics_core.analysis.sections import AnalysisRequest, AnalysisSection, run_analyses
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.jsonable import json_ready
from psymetrics_core.base.writing import csv_cell, output_dir, write_output
from psymetrics_core.pluginsys.session import Session

__all__ = ["RunsAnalysis", "analyze_runs", "write_report"]


@dataclass(frozen=True)
class RunsAnalysis:
    """The JSON-able report (with ``sections`` by key when plugins gave any) and the sections."""

    report: dict[str, Any]
    sections: list[AnalysisSection]


def analyze_runs(
    run_dirs: Sequence[Path],
    session: Session,
    *,
    labels: Path | None = None,
    reference: str = "original",
    nan_policy: str = "match",
    baseline: Path | None = None,
    fence_k: float = 1.5,
    hypotheses: Sequence[str] = (),
    deletion: str = "listwise",
    population: PopulationOptions | None = None,
    warn: Callable[[str], None] | None = None,
) -> RunsAnalysis:
    """Every registered analysis of ``session`` (``sections.run_analyses``) on ``run_dirs``: the
    core's per-run tables (``report.analyze``) are the report's body, the other sections (the
    core's ecological validity and population psychometrics, the plugins') its ``sections``.

    ``labels`` (ground truth per persona) goes to the plugins' analyses; it is an error when
    no run has tasks that use it. ``warn`` gets one line per plugin analysis that failed.
    """
    # a bad population option is one line before the per-run tables are computed; the runs
    # read for the check are handed to the population section (read once)
    ready = check_population_options(run_dirs, session.instruments(), population)
    request = AnalysisRequest(
        tuple(run_dirs),
        session,
        labels=labels,
        reference=None if reference == "original" else reference,
        nan_policy=nan_policy,
        baseline=baseline,
        fence_k=fence_k,
        hypotheses=tuple(hypotheses),
        deletion=deletion,
        population=population,
        population_ready=ready,
    )
    found = run_analyses(request, warn)
    if PER_RUN not in found:
        raise PsymError(
            f"no analysis '{PER_RUN}' registered: the core's analysis.builtin is missing"
        )
    report = dict(found.pop(PER_RUN).data)
    sections = list(found.values())
    if labels is not None and not [s for s in sections if s.key != "population"]:
        raise PsymError(f"--labels {labels}: no run here has tasks that use labels (projective)")
    if sections:
        report["sections"] = {s.key: s.data for s in sections}
    return RunsAnalysis(report, sections)


def write_report(
    report: dict[str, Any], out: str | Path, inputs: Sequence[str | Path] = ()
) -> Path:
    """Write analysis.json and the non-empty flat CSVs (consistency, styles, facets, convergent
    validity) into ``out`` (``base.writing``: never onto one of ``inputs``, the files the
    analysis read; text cells a spreadsheet would run are neutralised); returns the path of
    analysis.json."""
    out = output_dir(out, inputs=inputs, what="--output")
    text = json.dumps(json_ready(report), indent=2) + "\n"
    path = write_output(out / "analysis.json", text, inputs=inputs, what="--output")
    cons, sty, fac = [], [], []
    for run, tasks in report["analyses"].items():
        for task, a in tasks.items():
            cons += [{"run": run, "task": task, **r} for r in a["consistency"]["per_seed"]]
            sty += [
                {"run": run, "task": task, **r} for r in a["response_styles"]["per_administration"]
            ]
            for scale, r in a["facets"].items():
                fac += [
                    {"run": run, "task": task, "scale": scale, "facet": k, "share": v}
                    for k, v in r["shares"].items()
                ]
    for name, rows in (
        ("consistency", cons),
        ("response_styles", sty),
        ("facets", fac),
        ("convergent_validity", report["convergent_validity"].get("rows", [])),
    ):
        if rows:  # a single run has no consistency/convergent rows: write no empty table
            frame = pd.DataFrame(rows).map(lambda v: csv_cell(v) if isinstance(v, str) else v)
            csv_text = frame.to_csv(index=False)
            write_output(out / f"{name}.csv", csv_text, inputs=inputs, what="--output")
    return path
