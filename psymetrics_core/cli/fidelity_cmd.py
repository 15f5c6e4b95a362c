"""``psym fidelity MODEL HUMAN``: how closely a model's (or a persona population's) answer
distributions match people's, item by item (parsing and printing only; the numbers come from
``analysis.fidelity``)."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.analysis.fidelity import FidelityOptions, fidelity
from psymetrics_core.analysis.fidelity.output import fidelity_json, write_fidelity
from psymetrics_core.base.writing import check_output_dir
from psymetrics_core.cli import session_of
from psymetrics_core.cli.console import print_json, stderr
from psymetrics_core.cli.fidelity_tables import print_fidelity
from psymetrics_core.records.inputs import run_inputs

__all__ = ["fidelity_cmd", "fidelity_options"]


def fidelity_options(f: click.decorators.FC) -> click.decorators.FC:
    """The comparison's options, shared by ``psym fidelity`` (``--group`` is each command's)."""
    for opt in reversed(
        [
            click.option(
                "--bootstrap",
                "n_boot",
                type=click.IntRange(0, 100_000),
                default=1000,
                show_default=True,
                help="Bootstrap replicates (0: none).",
            ),
            click.option(
                "--seed",
                type=click.IntRange(0, 2**32 - 1),
                default=1234,
                show_default=True,
                help="Seed of the bootstrap and the human splits.",
            ),
            click.option(
                "--k-hat",
                "khat",
                is_flag=True,
                help="Also Huang, Wu & Wang's (2025) effective human sample size k̂.",
            ),
            click.option(
                "--k-min",
                type=click.IntRange(2, 1000),
                default=2,
                show_default=True,
                help="k̂: below this many answers the synthetic interval is the whole "
                "range (k̂ never falls below it).",
            ),
            click.option(
                "--alpha",
                type=click.FloatRange(0, 1, min_open=True, max_open=True),
                default=0.05,
                show_default=True,
                help="k̂: 1 - the synthetic level.",
            ),
            click.option(
                "--gamma",
                type=click.FloatRange(0, 1, min_open=True, max_open=True),
                default=0.5,
                show_default=True,
                help="k̂: coverage of the human interval.",
            ),
            click.option(
                "--c",
                "c",
                type=click.FloatRange(0, 1000, min_open=True),
                default=2.0,
                show_default=True,
                help="k̂: the synthetic interval's width factor √C.",
            ),
        ]
    ):
        f = opt(f)
    return f


@click.command("fidelity")
@click.argument("model", type=click.Path(path_type=Path))
@click.argument("human", type=click.Path(path_type=Path))
@click.option(
    "--task",
    default=None,
    help="The instrument whose items, options and scales apply (default: the run's).",
)
@click.option(
    "--group",
    "groups",
    multiple=True,
    metavar="COLUMN",
    help="A group column of HUMAN (repeatable): fidelity per group, and steerability "
    "where the personas carry a label of that name.",
)
@fidelity_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--output",
    "-o",
    type=click.Path(),
    default=None,
    help="Write fidelity.json and tidy CSVs (items, distributions, scales, overall, "
    "subgroups) into this directory.",
)
@click.pass_context
def fidelity_cmd(
    ctx: click.Context,
    model: Path,
    human: Path,
    task: str | None,
    groups: tuple[str, ...],
    n_boot: int,
    seed: int,
    khat: bool,
    k_min: int,
    alpha: float,
    gamma: float,
    c: float,
    as_json: bool,
    output: str | None,
) -> None:
    """Compare MODEL's answer distribution on each item with HUMAN's.

    MODEL and HUMAN are each a run directory of `psym eval` (a single run or a population), an
    answers CSV (respondent,item,response[,weight][,group columns], or wide: a respondent
    column and a column per item) or a distribution table (item,option,share|count[,position]).
    Shows OpinionQA's representativeness (Santurkar et al., 2023), the SimBench score (Hu et
    al., 2025), JSD and KS per item, scale and overall with bootstrap intervals, beside the
    human ceiling (two random halves of HUMAN).
    """
    inputs = [
        *run_inputs([p for p in (model, human) if p.is_dir()]),
        *(p for p in (model, human) if not p.is_dir()),
    ]
    if output is not None:
        check_output_dir(output, inputs=inputs)
    opts = FidelityOptions(
        task=task,
        groups=groups,
        n_boot=n_boot,
        seed=seed,
        khat=khat,
        k_min=k_min,
        alpha=alpha,
        gamma=gamma,
        c=c,
    )
    result = fidelity(model, human, session_of(ctx), opts)
    if output is not None:
        stderr.print(f"fidelity: {write_fidelity(result, output, inputs)}", markup=False)
    if as_json:
        print_json(fidelity_json(result))
        return
    print_fidelity(result)
