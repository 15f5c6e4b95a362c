"""``psym validity``: questionnaire scores against downstream behaviour across models."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import click

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
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("psym-validity"),
    show_default=True,
    help="Folder for validity.json, validity.csv, validity.png and validity.svg.",
)
@click.option("--exclude", multiple=True, help="Model label to leave out (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def validity_cmd(
    run_dirs: tuple[Path, ...],
    pairs: Path | None,
    output: Path,
    exclude: tuple[str, ...],
    as_json: bool,
) -> None:
    """Spearman's rho between each questionnaire score and its behaviour score across models."""
    from psymetrics_core.analysis.ecological import load_pairs, read_runs, validity
    from psymetrics_core.analysis.ecological_plot import rank_plot
    from psymetrics_core.base.errors import PsymError

    scores = read_runs(run_dirs)
    results = validity(scores, load_pairs(pairs), exclude)
    if not results:
        raise PsymError(
            f"no construct pair found in {len(run_dirs)} run(s): each pair needs a "
            "questionnaire and a behaviour score (see --pairs)"
        )
    rows = [r.to_json() for r in results]
    output.mkdir(parents=True, exist_ok=True)
    (output / "validity.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    with (output / "validity.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "construct",
                "test_score",
                "behaviour_score",
                "n",
                "rho",
                "ci_low",
                "ci_high",
                "p_value",
            ]
        )
        for r in results:
            w.writerow(
                [
                    r.construct,
                    r.test_score,
                    r.behaviour_score,
                    r.n,
                    r.rho,
                    r.ci_low,
                    r.ci_high,
                    r.p_value,
                ]
            )
    plots = rank_plot(results, output)
    if as_json:
        print_json(rows)
        return
    t = table(
        f"ecological validity across {len(scores)} model(s)",
        ["construct", "questionnaire", "behaviour", "n", "rho", "95% CI", "p"],
    )
    for r in results:
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
    stderr.print(f"table: {output / 'validity.csv'}   plots: {', '.join(map(str, plots))}")
