"""``psym analyze``: reliability, validity, norms and response styles of recorded runs."""

from __future__ import annotations

from pathlib import Path

import click

from .console import print_json, stderr

__all__ = ["analyze_cmd"]


@click.command("analyze")
@click.argument(
    "run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path)
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write analysis.json (and the tables' CSVs) into this directory.",
)
@click.option(
    "--reference",
    default="original",
    show_default=True,
    help="Condition the others are compared with for answer consistency.",
)
@click.option(
    "--nan-policy",
    type=click.Choice(["match", "mismatch", "omit"]),
    default="match",
    show_default=True,
    help="Consistency when answers are missing: both missing = match (Jung et al., 2025), any "
    "missing = mismatch, or omit the item.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Human consistency values (CSV: consistency[,task,condition]) for Tukey fences.",
)
@click.option("--fence-k", type=float, default=1.5, show_default=True, help="Tukey fence k.")
@click.option(
    "--hypothesis",
    "hypotheses",
    multiple=True,
    metavar="A~B:+|-",
    help="Convergent-validity hypothesis across runs, e.g. mfq.authority~mfq.loyalty:+ "
    "(repeatable; default: Jung et al.'s (2025) hypotheses where their scores exist).",
)
def analyze_cmd(
    run_dirs: tuple[Path, ...],
    as_json: bool,
    output: Path | None,
    reference: str,
    nan_policy: str,
    baseline: Path | None,
    fence_k: float,
    hypotheses: tuple[str, ...],
) -> None:
    """Analyse run directories of `psym eval` (no model calls)."""
    try:
        from ..analysis.report import analyze
    except ImportError as exc:
        from ..errors import PsymError

        raise PsymError(
            f"psym analyze needs the analysis extra ({exc.name} is missing): "
            "pip install 'psymetrics-core[analysis]'"
        ) from exc

    report = analyze(
        list(run_dirs),
        reference=reference,
        nan_policy=nan_policy,
        baseline=baseline,
        fence_k=fence_k,
        hypotheses=hypotheses,
    )
    if output is not None:
        from .analyze_tables import write_outputs

        write_outputs(report, output)
        stderr.print(f"analysis: {output / 'analysis.json'}")
    if as_json:
        print_json(report)
        return
    from .analyze_tables import print_report

    print_report(report)
