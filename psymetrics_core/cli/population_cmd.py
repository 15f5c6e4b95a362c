"""``psym population``: build a population of simulated respondents for ``psym eval
--population``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from psymetrics_core.records.population import MAX_RESPONDENTS
from psymetrics_core.study.population import (
    GENERATORS,
    BuildSpec,
    build,
    check_build_output,
    write_population,
)


@click.group("population")
def population_cmd() -> None:
    """Build populations of simulated respondents (personas with labels)."""


@population_cmd.command("build")
@click.option(
    "--source",
    type=click.Path(path_type=Path),
    default=None,
    help="Persona source: .jsonl, .csv, .parquet, .txt (one per line) or a folder "
    "written by datasets' save_to_disk.",
)
@click.option(
    "--generate",
    type=click.Choice(GENERATORS),
    default=None,
    help="Generate label-bearing profiles instead: trait-markers (Big Five domains at "
    "--levels, after Serapio-García et al. 2023) or binary (the 2^5 high/low "
    "profiles).",
)
@click.option(
    "--levels",
    default=None,
    help="With --generate trait-markers: the levels 1-9 each domain takes [default: 1,9].",
)
@click.option(
    "--n",
    "n",
    type=click.IntRange(1, MAX_RESPONDENTS),
    default=None,
    help=f"Respondents to draw (1-{MAX_RESPONDENTS:,}) [default: all].",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**32 - 1),
    default=1234,
    show_default=True,
    help="Seed of the sample drawn from --source (the same seed, the same respondents).",
)
@click.option(
    "--stratify",
    default="",
    help="Comma-separated label fields: proportional quotas (each within one of its target).",
)
@click.option(
    "--text-field",
    default=None,
    help="The field holding the persona text [default: persona, text, description or profile].",
)
@click.option(
    "--id-field",
    default="id",
    help="The field holding the respondent id [default: id; a row without one gets the "
    "source file's name and its row number].",
)
@click.option("--split", default=None, help="The split of a saved DatasetDict.")
@click.option(
    "--licence",
    default="",
    help="The source's licence, recorded with every respondent (e.g. CC-BY-NC-SA-4.0).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    required=True,
    help="Population file to write (JSON lines; not the persona source).",
)
def build_cmd(
    source: Path | None,
    generate: str | None,
    levels: str | None,
    n: int | None,
    seed: int,
    stratify: str,
    text_field: str | None,
    id_field: str,
    split: str | None,
    licence: str,
    output: str,
) -> None:
    """Draw a population from a persona source, or generate one, and write it to --output."""
    try:
        level_list = (
            None if levels is None else tuple(int(v) for v in levels.split(",") if v.strip())
        )
    except ValueError:
        raise click.BadParameter(
            "expected comma-separated integers 1-9", param_hint="--levels"
        ) from None
    spec = BuildSpec(
        source=source,
        generate=generate,
        n=n,
        seed=seed,
        stratify=tuple(f.strip() for f in stratify.split(",") if f.strip()),
        text_field=text_field,
        id_field=id_field,
        licence=licence,
        levels=level_list,
        split=split,
    )
    check_build_output(output, spec)  # before the source is read: never replace an input
    built = build(spec)
    people = built.people
    write_population(output, people, inputs=[source] if source is not None else [])
    dropped = (
        f" ({built.duplicates:,} duplicate persona{'s' * (built.duplicates != 1)} dropped)"
        if built.duplicates
        else ""
    )
    click.echo(f"wrote {_respondents(len(people))} to {output}{dropped}")
    for field in spec.stratify:
        counts = Counter(str(p.labels.get(field)) for p in people)
        click.echo(f"  {field}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def _respondents(n: int) -> str:
    return f"{n:,} respondent{'s' * (n != 1)}"
