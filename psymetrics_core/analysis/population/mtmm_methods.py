"""The multitrait-multimethod matrix with *measurement methods* as the method facet (issue 33):
the same personas measured by different methods (self-report, interview, ...), e.g. one
population's ``bfi`` run administered item by item and its ``bfi`` run administered as an
interview.

``mtmm`` (Campbell & Fiske, 1959) takes tasks as its methods. Here a method is a (method, task)
pair, named ``method:task`` as the divergence section names profiles: the method of a respondent's
answers is its interview condition (``interview``, ``interview-dimensions``, ...) when it was
interviewed, else the task's method in ``divergence_constructs.yaml``. The traits and each task's
scale of a trait come from that same table (its constructs), so the trait mapping has one home.
It applies when the population runs hold answers of 2+ methods (then it replaces the instrument
MTMM, and the text says so); respondents are matched across methods by persona (each persona's
scores averaged over its administrations), as separate runs of one population are.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from psymetrics_core.analysis.divergence import INTERVIEW, Constructs, load_constructs
from psymetrics_core.analysis.population.data import Responses, ScaleStructure
from psymetrics_core.analysis.population.diagnostics import scale_scores
from psymetrics_core.analysis.population.mtmm import MTMM, TraitTable, mtmm
from psymetrics_core.analysis.population.population_data import PopulationData

__all__ = ["SOURCE", "method_groups", "method_table", "method_mtmm", "method_note"]

SOURCE = "divergence_constructs.yaml (method facet: measurement method)"


def _method_of(condition: str, task: str, constructs: Constructs) -> str | None:
    parts = condition.split("+")
    asked = [p for p in parts if p.startswith(INTERVIEW)]
    return asked[0] if asked else constructs.methods.get(task)


def method_groups(pop: PopulationData, constructs: Constructs) -> dict[str, list[str]]:
    """``method:task`` -> the respondent keys of ``pop`` measured by that method (a key whose
    task has no declared method and was not interviewed is left out)."""
    out: dict[str, list[str]] = {}
    if pop.cells is None:
        return out
    for key, condition in pop.cells["condition"].items():
        method = _method_of(str(condition), pop.task, constructs)
        if method is not None:
            out.setdefault(f"{method}:{pop.task}", []).append(str(key))
    return out


def method_table(labels: list[str], constructs: Constructs) -> TraitTable:
    """trait -> {``method:task``: the task's scale of the trait} for every construct of the
    table that some label's task measures."""
    traits: dict[str, dict[str, str]] = {}
    for constructs_of in constructs.families.values():
        for construct, tasks in constructs_of.items():
            for label in labels:
                scale = tasks.get(label.split(":", 1)[1])
                if scale is not None:
                    traits.setdefault(construct, {})[label] = scale
    return TraitTable(traits, SOURCE)


def method_mtmm(
    found: Mapping[str, PopulationData],
    structures: Mapping[str, ScaleStructure],
    constructs: Constructs | None = None,
) -> MTMM | None:
    """The MTMM of the population runs with measurement methods as the method facet; None when
    the runs' answers are of one method only."""
    constructs = constructs or load_constructs()
    scores: dict[str, pd.DataFrame] = {}
    persona: dict[str, pd.Series] = {}
    for task, structure in structures.items():
        pop = found[task]
        per = pd.DataFrame(
            scale_scores(Responses(pop.values, pop.persona), structure), index=pop.values.index
        )
        for label, keys in method_groups(pop, constructs).items():
            scores[label] = per.loc[keys]
            persona[label] = pop.persona.loc[keys]
    if len({label.split(":", 1)[0] for label in scores}) < 2:
        return None
    table = method_table(list(scores), constructs)
    for label, frame in scores.items():  # a scale the run gave no item of (--limit): no scores
        wanted = [ms[label] for ms in table.traits.values() if label in ms]
        scores[label] = frame.reindex(columns=list(dict.fromkeys([*frame.columns, *wanted])))
    return mtmm(scores, table, persona)


def method_note(m: MTMM, found: Mapping[str, PopulationData]) -> str:
    """The line that says which facet the MTMM below uses and the rows of each method."""
    rows = []
    for label in m.methods:
        method, task = label.split(":", 1)
        groups = method_groups(found[task], load_constructs())
        keys = groups.get(label, [])
        personas = found[task].persona.loc[keys].nunique() if keys else 0
        rows.append(f"{label} {len(keys)} administrations of {personas} personas")
    return (
        "MTMM with the measurement method as the method facet (the runs hold answers of "
        f"{len(m.methods)} methods; traits from divergence_constructs.yaml): " + "; ".join(rows)
    )
