"""``psym analyze``: reliability, validity, norms and response styles of recorded runs."""

from __future__ import annotations

import math
from pathlib import Path

import click

from psymetrics_core.analysis.fidelity import FidelityOptions, fidelity
from psymetrics_core.analysis.fidelity.output import fidelity_json, fidelity_text
from psymetrics_core.analysis.outputs import analyze_runs, write_report
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.responses import analyze_responses, responses_json
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.writing import check_output_dir
from psymetrics_core.cli import session_of
from psymetrics_core.cli.analyze_tables import print_report, print_responses_report
from psymetrics_core.cli.bounded import bounded
from psymetrics_core.cli.console import print_json, stderr
from psymetrics_core.cli.population_options import population_options
from psymetrics_core.records.inputs import run_inputs

__all__ = ["analyze_cmd"]


def _fence_k(value: float) -> float:
    """``--fence-k``: Q1 - k*IQR .. Q3 + k*IQR needs a finite k >= 0 (else lower > upper)."""

    if not math.isfinite(value) or value < 0:
        raise click.BadParameter(f"expected a finite number >= 0, got {value!r}")
    return value


@click.command("analyze")
@click.argument(
    "run_dirs", nargs=-1, required=False, type=click.Path(file_okay=False, path_type=Path)
)
@click.option(
    "--task",
    default=None,
    help="With --responses: the task whose key applies (without it: your own survey, numeric "
    "answers, no instrument file).",
)
@click.option(
    "--responses",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Analyse a CSV instead of run directories: with --task the long format "
    "(respondent,item,response[,...]); without --task your own survey, wide (a row per "
    "respondent, a column per item, optional respondent and label columns) or long, the items "
    "being --cfa-model's names (default: every column but respondent, persona, --group, "
    "--cluster and --criterion labels).",
)
@population_options(
    group_help="With --responses: column to analyse by group (and the invariance ladder across "
    "its groups). Population runs: the invariance ladder across model, condition or a "
    "respondent label.",
    criterion_extra="with --responses, the labels are the file's columns constant within "
    "each respondent.",
)
@click.option(
    "--human",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --responses: human answers in the same layout; LLM vs human invariance ladder "
    "(groups: llm, human). With run directories: the human fidelity section of each run against "
    "this answers CSV or distribution table (as `psym fidelity RUN FILE`).",
)
@click.option(
    "--human-group",
    "human_groups",
    multiple=True,
    metavar="COLUMN",
    help="With run directories and --human: a group column of the human file (repeatable): "
    "fidelity per group and steerability (as `psym fidelity --group`).",
)
@click.option(
    "--form", default="original", show_default=True, help="With --task --responses: the form."
)
@click.option(
    "--cluster",
    default=None,
    help="With --responses: the column naming each respondent's persona, for clustered "
    "bootstrap intervals [default: persona, where the file has it].",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--output",
    "-o",
    type=click.Path(),  # checked by base.writing: one line, '' named as given
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
    help="Consistency when answers are missing: both missing = match (Jung et al., 2026), any "
    "missing = mismatch, or omit the item.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Human consistency values (CSV: consistency[,task,condition]) for Tukey fences.",
)
@click.option(
    "--labels",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Ground-truth labels per persona (JSON, pdb_labels.json layout) for the validity of "
    "projective diagnoses (accuracy, MBTI Hamming distance, majority baselines).",
)
@click.option(
    "--fence-k",
    type=bounded("--fence-k"),
    default=1.5,
    show_default=True,
    callback=lambda _c, _p, v: _fence_k(v),
    help="Tukey fence k (a finite number >= 0).",
)
@click.option(
    "--hypothesis",
    "hypotheses",
    multiple=True,
    metavar="A~B:+|-",
    help="Convergent-validity hypothesis across runs, e.g. mfq.authority~mfq.loyalty:+ "
    "(repeatable; default: Jung et al.'s (2026) hypotheses where their scores exist).",
)
@click.pass_context
def analyze_cmd(
    ctx: click.Context,
    run_dirs: tuple[Path, ...],
    task: str | None,
    responses: Path | None,
    form: str,
    as_json: bool,
    output: str | None,
    reference: str,
    nan_policy: str,
    baseline: Path | None,
    labels: Path | None,
    fence_k: float,
    hypotheses: tuple[str, ...],
    cluster: str | None,
    human: Path | None,
    human_groups: tuple[str, ...],
    population: PopulationOptions,
) -> None:
    """Analyse run directories of `psym eval`, or a CSV of responses (no model calls): a
    task's long format with --task, or your own survey's numeric answers without it.

    Plugins add sections for their own tasks (the projective tests: κ, DCR with direction and
    |μΔ| against the neutral cell, accuracy against --labels, two-judge agreement).
    """
    if human is not None and responses is None and not run_dirs:
        raise PsymError(
            "--human: give run directories (human fidelity) or --responses FILE "
            "(the LLM answers, for the invariance ladder)"
        )
    if human_groups and (human is None or responses is not None):
        raise PsymError("--human-group: applies to run directories with --human FILE")
    if responses is not None or task is not None:
        if run_dirs or responses is None:
            raise PsymError("give run directories, or --responses FILE [--task TASK] (not both)")
        _analyze_file(ctx, task, responses, form, cluster, human, population, as_json)
        return
    if not run_dirs:
        raise PsymError("give run directories of `psym eval`, or --responses FILE [--task TASK]")
    inputs = [
        *run_inputs(run_dirs),
        *(p for p in (baseline, labels, population.mtmm, human) if p is not None),
    ]
    if output is not None:
        check_output_dir(output, inputs=inputs)  # before the analysis
    result = analyze_runs(
        list(run_dirs),
        session_of(ctx),
        labels=labels,
        reference=reference,
        nan_policy=nan_policy,
        baseline=baseline,
        fence_k=fence_k,
        hypotheses=hypotheses,
        deletion=population.missing,  # alpha of the tables follows --missing too
        population=population,
        warn=lambda line: stderr.print(f"warning: {line}", markup=False),
    )
    fid = {}
    if human is not None:
        opts = FidelityOptions(groups=human_groups)
        fid = {str(run): fidelity(run, human, session_of(ctx), opts) for run in run_dirs}
        result.report["fidelity"] = {run: fidelity_json(r) for run, r in fid.items()}
    if output is not None:
        stderr.print(f"analysis: {write_report(result.report, output, inputs)}")
    if as_json:
        print_json(result.report)
        return
    print_report(result.report)
    for section in result.sections:
        click.echo(f"\n{section.title}\n{section.text}")
    for run, r in fid.items():
        click.echo(f"\nHuman fidelity: {run} against {human}\n{fidelity_text(r)}")


def _analyze_file(
    ctx: click.Context,
    task: str | None,
    responses: Path,
    form: str,
    cluster: str | None,
    human: Path | None,
    population: PopulationOptions,
    as_json: bool,
) -> None:
    """``psym analyze --responses FILE [--task TASK]``: the analysis of a CSV, printed."""
    group = population.structure.group if population.structure else None
    deletion = population.missing  # alpha of the tables follows --missing too
    if task is None and form != "original":
        raise PsymError(f"--form {form}: a form of --task TASK; your own survey has none")
    if population.mtmm is not None:
        raise PsymError(
            f"--mtmm {population.mtmm}: applies to population run directories, not to --responses"
        )
    rep = analyze_responses(
        task,
        responses,
        session_of(ctx),
        form=form,
        group=group,
        deletion=deletion,
        cluster=cluster,
        population=population,
        human=human,
    )
    if as_json:
        print_json(responses_json(rep))
        return
    print_responses_report(rep)
