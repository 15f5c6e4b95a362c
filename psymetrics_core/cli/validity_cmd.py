"""``psym validity``: questionnaire scores against downstream behaviour across models."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.analysis.ecological import ecological_validity
from psymetrics_core.cli.console import fmt, print_json, stderr, stdout, table


@click.command("validity")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--pairs",
    type=click.Path(path_type=Path),
    default=None,
    help="Pairing table (YAML) [default: the shipped ASI/SR2K/MFQ pairs].",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(),  # checked by base.writing: one line, '' named as given
    default="psym-validity",
    show_default=True,
    help="Folder for validity.json, validity.csv, validity.png and validity.svg.",
)
@click.option("--exclude", multiple=True, help="Model label to leave out (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def validity_cmd(
    run_dirs: tuple[Path, ...],
    pairs: Path | None,
    output: str,
    exclude: tuple[str, ...],
    as_json: bool,
) -> None:
    """Spearman's rho between each questionnaire score and its behaviour score across models.

    The same table is a section of `psym analyze RUN...` (with the shipped pairs); this command
    adds --pairs, --exclude and the files (validity.csv, rank plots).
    """

    rep = ecological_validity(run_dirs, output, pairs=pairs, exclude=exclude)
    if as_json:
        print_json(rep.rows())
        return
    t = table(
        f"ecological validity across {rep.n_models} model(s)",
        ["construct", "questionnaire", "behaviour", "n", "rho", "95% CI", "p"],
    )
    for r in rep.results:
        ci = "—" if r.ci_low is None else f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}]"
        t.add_row(
            r.construct,
            str(r.test_score),
            str(r.behaviour_score),
            str(r.n),
            fmt(r.rho),
            ci,
            fmt(r.p_value, 3),
        )
    stdout.print(t)
    stderr.print(f"table: {rep.table}   plots: {', '.join(map(str, rep.plots))}")
    stderr.print("(the same table is a section of `psym analyze RUN...`)", markup=False)
