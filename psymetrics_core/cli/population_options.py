"""The population-analysis options ``psym analyze`` and ``psym report`` share: parsed once
here into one ``PopulationOptions`` record handed to the library (``population=``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from psymetrics_core.analysis.population.cfa_model import read_cfa_model
from psymetrics_core.analysis.population.dimensionality import PA_KINDS, ROTATIONS
from psymetrics_core.analysis.population.missing import POLICIES
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.population.structure_options import StructureOptions
from psymetrics_core.base.errors import PsymError

__all__ = ["population_options", "criteria_pairs"]


def criteria_pairs(values: tuple[str, ...]) -> tuple[tuple[str, str], ...] | None:
    """``--criterion SCALE=FIELD`` values as (scale, field) pairs in the order given, each
    kept (a scale may be paired with several fields; a repeated pair once); None when none
    was given."""
    out: dict[tuple[str, str], None] = {}
    for v in values:
        scale, sep, fld = v.partition("=")
        if not sep or not scale.strip() or not fld.strip():
            raise PsymError(f"--criterion {v[:80]!r}: expected SCALE=FIELD")
        out[(scale.strip(), fld.strip())] = None
    return tuple(out) or None


def _efa(value: str | None) -> int | str | None:
    """``--efa``: a number of factors >= 1, or auto."""
    if value is None or value == "auto":
        return value
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise click.BadParameter(f"expected a number of factors >= 1 or auto, got {value[:40]!r}")
    return n


_PATH = click.Path(dir_okay=False, path_type=Path)
_CRITERION = (
    "Population runs: criterion validity of SCALE against the respondents' label FIELD "
    "(Spearman's rho, AUC for a two-valued label) [default: every scale named like a label]"
)
_OPTIONS = (
    click.option(
        "--efa",
        default=None,
        metavar="N|auto",
        callback=lambda _c, _p, v: _efa(v),
        help="Population analyses: EFA with N factors (auto: parallel analysis's "
        "count), with Tucker's congruence where the instrument ships human loadings.",
    ),
    click.option(
        "--rotation",
        type=click.Choice([*ROTATIONS, "none"]),
        default=None,
        help="With --efa: the rotation [default: oblimin].",
    ),
    click.option(
        "--pa",
        type=click.Choice(PA_KINDS),
        default="factors",
        show_default=True,
        help="Population analyses: what parallel analysis counts: common factors "
        "(eigenvalues with one-factor communalities on the diagonal, as psych's "
        "fa.parallel) or principal components (Horn 1965); --efa auto takes it.",
    ),
    click.option(
        "--missing",
        type=click.Choice(POLICIES),
        default=None,
        help="Population analyses: unanswered items in every analysis (reliability, "
        "parallel analysis, EFA, CFA, invariance, IRT): complete rows only, pairwise "
        "correlations, or full-information ML where the estimator has it (else one "
        "line saying so) [default: listwise].",
    ),
    click.option(
        "--deletion",
        type=click.Choice(POLICIES[:2]),
        default=None,
        hidden=True,
        help="Deprecated: --missing.",
    ),
    click.option(
        "--cfa-model",
        default=None,
        metavar="[TASK=]FILE",
        help="Population analyses: a CFA model in lavaan syntax (F =~ item + item, "
        "a ~~ b) over the item ids of the task that has them all (TASK=: of that "
        "task); for your own survey's file (psym analyze, no --task), over its "
        "columns.",
    ),
    click.option(
        "--irt",
        is_flag=True,
        help="Population analyses: a graded response model per scale "
        "(discrimination, thresholds, test information); needs the irt extra.",
    ),
    click.option(
        "--mtmm",
        type=_PATH,
        default=None,
        help="Population runs: the multitrait-multimethod trait table (YAML, traits: "
        "{TRAIT: {TASK: SCALE, ...}}) [default: the shipped Big Five/EPQ-R table, "
        "where 2+ of its tasks share 2+ traits].",
    ),
)


def population_options(
    group_help: str, criterion_extra: str = ""
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add ``--group`` (with ``group_help``), ``--criterion`` (its shared help, then
    ``criterion_extra``: what only this command has) and the shared options to a command; the
    command receives them as one ``population: PopulationOptions`` argument."""
    criterion = click.option(
        "--criterion",
        "criteria",
        multiple=True,
        metavar="SCALE=FIELD",
        help=_CRITERION + (f"; {criterion_extra}" if criterion_extra else "."),
    )

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def wrapper(*args: Any, **kw: Any) -> Any:
            kw["population"] = _options(**{k: kw.pop(k) for k in _NAMES})
            return command(*args, **kw)

        out: Callable[..., Any] = wrapper
        for option in reversed(
            (click.option("--group", default=None, help=group_help), criterion, *_OPTIONS)
        ):
            out = option(out)
        return out

    return decorate


_NAMES = (
    "group",
    "criteria",
    "efa",
    "rotation",
    "cfa_model",
    "irt",
    "mtmm",
    "pa",
    "missing",
    "deletion",
)


def missing_policy(missing: str | None, deletion: str | None) -> str:
    """``--missing``, or the old ``--deletion`` (alpha only, once) read as it, with a warning;
    both, differing, is one error."""
    if deletion is None:
        return missing or "listwise"
    if missing is not None and missing != deletion:
        raise PsymError(
            f"--deletion {deletion} and --missing {missing}: --deletion is the old "
            "name of --missing; give --missing only"
        )
    click.echo(
        f"warning: --deletion is now --missing (it applies to every population "
        f"analysis): read as --missing {deletion}",
        err=True,
    )
    return deletion


def _options(
    group: str | None,
    criteria: tuple[str, ...],
    efa: int | str | None,
    rotation: str | None,
    cfa_model: str | None,
    irt: bool,
    mtmm: Path | None,
    pa: str,
    missing: str | None,
    deletion: str | None,
) -> PopulationOptions:
    """The options as one record (``--cfa-model`` read here, so a bad model line fails
    before any analysis)."""
    if rotation is not None and efa is None:
        raise PsymError(f"--rotation {rotation}: give --efa N|auto too")
    structure = StructureOptions(
        group=group,
        efa=efa,
        rotation=None if rotation == "none" else rotation or "oblimin",
        cfa_model=None if cfa_model is None else read_cfa_model(cfa_model),
        pa=pa,
    )
    return PopulationOptions(
        criterion=criteria_pairs(criteria),
        irt=irt,
        structure=structure,
        mtmm=mtmm,
        missing=missing_policy(missing, deletion),
    )
