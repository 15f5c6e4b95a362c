"""Population analyses of a long response file (``psym analyze --task T --responses FILE``).

The file's rows (``respondent,item,response`` plus any columns) become a respondent x item
matrix; a persona column (``--cluster COLUMN``, default ``persona`` where the file has one)
names the persona each respondent is a prompt variant of, for clustered bootstrap intervals;
every other column whose value is constant within each respondent is a label (criterion
validity with ``--criterion SCALE=FIELD``, or against the labels named like a scale). Per group
(``--group``) the analyses are those of population runs: diagnostics, reliability, one CFA per
scale, criterion validity (``runs.task_analysis``), parallel analysis, EFA and a CFA model
(``structure``); the invariance ladder runs across the groups (``invariance_across``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from psymetrics_core.analysis.population.criterion import with_composites
from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.entry import InvarianceEntry, PopulationEntry
from psymetrics_core.analysis.population.irt import require_irt
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.population.quiet import quiet_analysis
from psymetrics_core.analysis.population.runs import (
    PopulationData,
    check_criterion,
    present_structure,
    task_analysis,
)
from psymetrics_core.analysis.population.structure import invariance_entry
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Instrument

__all__ = [
    "CLUSTER_DEFAULT",
    "ItemKey",
    "respondent_columns",
    "population_data",
    "check_population",
    "population_report",
    "invariance_across",
    "check_grouping",
]

CLUSTER_DEFAULT = "persona"


@dataclass(frozen=True)
class ItemKey:
    """What the items of a long file are: the task's name, its items in order and its scales,
    with the ``instrument`` they come from (its norms and human loadings); ``instrument`` is
    None for your own survey (``analysis.population.survey``)."""

    task: str
    items: tuple[str, ...]
    structure: ScaleStructure
    form: str = "original"
    instrument: Instrument | None = None

    @classmethod
    def of(cls, inst: Instrument, form: str) -> ItemKey:
        """The key of an installed instrument's ``form``."""
        items = tuple(it.id for it in inst.forms[form])
        return cls(inst.id, items, ScaleStructure.from_instrument(inst, form), form, inst)


def check_grouping(path: object, group: str | None, cluster: str | None) -> None:
    """``--group`` and ``--cluster`` must name respondent-level fields, not the file's
    respondent, item or response column (which vary within a respondent: grouping by them
    would split each respondent's answers, by answer value for ``response``)."""
    for option, col in (("--group", group), ("--cluster", cluster)):
        if col in ("respondent", "item", "response"):
            raise PsymError(
                f"{option} {col}: the {col!r} column of {path} is not a respondent-level field "
                "(name a label column that holds one value per respondent)"
            )


def respondent_columns(
    columns: Sequence[str],
    rows: Sequence[tuple[int, Mapping[str, str]]],
    skip: set[str],
    respondents: Sequence[str],
    cluster: str | None = None,
) -> pd.DataFrame:
    """The columns of a long file (other than ``skip``) that hold one value per respondent
    (index: ``respondents``, the rows' respondent ids in order); empty cells are NaN. The
    ``cluster`` column must hold one value per respondent (else an error naming one)."""
    keep = [c for c in columns if c not in skip]
    if not keep:
        return pd.DataFrame(index=pd.Index(list(dict.fromkeys(respondents))))
    frame = pd.DataFrame({c: [r.get(c, "") for _, r in rows] for c in keep}, dtype=object).replace(
        "", None
    )
    frame.index = pd.Index(respondents)
    first = frame.groupby(level=0, sort=False).first()
    counts = frame.groupby(level=0, sort=False).nunique(dropna=False)
    if cluster is not None and cluster in counts.columns and (counts[cluster] > 1).any():
        who = counts.index[(counts[cluster] > 1).to_numpy()][0]
        raise PsymError(
            f"--cluster {cluster}: respondent {who!r} has more than one {cluster!r} value (the "
            "cluster column names the one persona each respondent is a variant of)"
        )
    constant = counts.max() <= 1
    return first.loc[:, [c for c in keep if bool(constant[c])]]


def _cluster(labels: pd.DataFrame, cluster: str | None) -> pd.Series:
    """The persona of each respondent: the cluster column, or the respondent itself."""
    if cluster is None:
        return pd.Series(labels.index, index=labels.index)
    return labels[cluster].fillna("").astype(str)


def population_data(
    key: ItemKey, frame: pd.DataFrame, labels: pd.DataFrame, cluster: str | None
) -> tuple[PopulationData, ScaleStructure]:
    """One group of a long file as population data with its scale structure: ``frame`` has
    ``respondent, item, response`` rows, ``labels`` one row per respondent
    (``respondent_columns``)."""
    values = frame.pivot(index="respondent", columns="item", values="response").astype(float)
    order = list(dict.fromkeys(frame["respondent"]))
    items = [i for i in key.items if i in set(values.columns)]
    values = values.reindex(index=order, columns=items)
    persona = _cluster(labels, cluster)
    lab = labels.drop(columns=[c for c in (cluster,) if c in labels.columns]).reindex(order)
    pop = PopulationData(
        key.task,
        values,
        persona.reindex(order),
        lab,
        int(len(frame)),
        int(frame["response"].notna().sum()),
        {key.form},
    )
    return pop, present_structure(key.structure, pop)


def check_population(
    key: ItemKey,
    groups: Mapping[str, tuple[PopulationData, ScaleStructure]],
    options: PopulationOptions,
) -> None:
    """The options of the population analyses checked against every group of a long file
    (``population_data``), one line before any analysis: ``--criterion`` names a scale (or
    a composite scale of the instrument) and a label; ``--irt`` has its extra."""
    for pop, structure in groups.values():
        cols = list(pop.values.columns)
        scales = with_composites(structure, key.instrument, key.form, cols)
        check_criterion(pop, scales, options.criterion)
    if options.irt:
        require_irt()


def population_report(
    key: ItemKey,
    pop: PopulationData,
    structure: ScaleStructure,
    options: PopulationOptions,
) -> PopulationEntry:
    """The population analyses of one group of a long file (``population_data``: ``pop`` and
    its ``structure``); the grouping of ``options.structure`` is left to
    ``invariance_across`` (one group here)."""
    opts = None if options.structure is None else replace(options.structure, group=None)
    scoped = replace(options, structure=opts)
    return task_analysis(pop, structure, scoped, key.instrument, "responses")


@quiet_analysis
def invariance_across(
    name: str,
    groups: Mapping[str, tuple[PopulationData, ScaleStructure]],
    missing: str = "listwise",
) -> InvarianceEntry:
    """The invariance ladder across the groups of a long file (the items every group has)."""
    pops = [p for p, _ in groups.values()]
    common = set.intersection(*(set(p.values.columns) for p in pops))
    cols = [c for c in pops[0].values.columns if c in common]
    values = pd.concat([p.values.loc[:, cols] for p in pops], ignore_index=True)
    group = pd.Series(
        [g for g, (p, _) in groups.items() for _ in range(len(p.values))], name=name, dtype=object
    )
    first = next(iter(groups.values()))[1]
    scales = {s: tuple(i for i in its if i in common) for s, its in first.scales.items()}
    structure = ScaleStructure(
        {s: its for s, its in scales.items() if its},
        {i: r for i, r in first.reverse.items() if i in common},
    )
    return invariance_entry(name, Responses(values, group=group), structure, missing)
