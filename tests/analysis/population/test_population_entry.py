"""The typed population entry (``analysis/population/entry.py``): ``to_json()`` keeps the JSON
contract of issue 25 (keys in their order, optional parts absent when not asked for, present
with their keys when asked), and the text is read from the same record.

The refactor that introduced the typed records was checked against main's code by capturing
``psym analyze RUNS --group model --efa auto --irt --criterion ... --json``, a bfi + pb-epqr
MTMM run, ``--responses --group --efa --cfa-model --json``, their text and the HTML report
before and after: byte-identical (with statsmodels' random ML start seeded, which differs run
to run on main)."""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import pytest
from test_population_report import _one_factor, _pop

from psymetrics_core.analysis.population.data import ScaleStructure
from psymetrics_core.analysis.population.entry import PopulationEntry
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.population.runs import present_structure, task_analysis, task_text
from psymetrics_core.analysis.population.structure_options import StructureOptions
from psymetrics_core.pluginsys.session import Session

BASE = [
    "n_respondents",
    "n_personas",
    "clustering",
    "parse_rate",
    "constant_items",
    "straightlining_share",
    "reasons",
    "reliability",
    "cfa",
    "criterion",
    "variance_ratio",
    "acquiescence",
    "acquiescence_reason",
    "distributions",
    "parallel_analysis",
    "missing",
    "source",
]


@pytest.fixture(scope="module")
def entries() -> tuple[PopulationEntry, PopulationEntry]:
    inst = Session().get_instrument("bfi")
    items = [it.id for it in inst.forms["original"]]
    values = _one_factor(items, 120, seed=4)
    pop = _pop(values, "bfi")
    pop.labels = pd.DataFrame({"grp": ["a", "b"] * 60}, index=values.index)
    structure = present_structure(ScaleStructure.from_instrument(inst), pop)
    plain = task_analysis(pop, structure, PopulationOptions(n_boot=0), inst)
    opts = PopulationOptions(n_boot=0, structure=StructureOptions(group="grp", efa=1))
    asked = task_analysis(pop, structure, replace(opts, irt=True), inst)
    return plain, asked


def test_json_keys_in_contract_order(entries: tuple[PopulationEntry, PopulationEntry]) -> None:
    plain, asked = entries
    assert list(plain.to_json()) == BASE  # no optional part unless asked for
    j = asked.to_json()
    assert list(j) == [*BASE, "efa", "invariance", "irt"]
    assert list(j["efa"]) == [
        "n_factors",
        "rotation",
        "method",
        "loadings",
        "factors",
        "factor_corr",
        "reason",
        "heywood",
        "n",
        "rows",
        "basis",
        "congruence",
        "congruence_reason",
        "congruence_source",
        "congruence_match",
        "congruence_reading",
        "congruence_items",
        "congruence_note",
    ]
    assert list(j["invariance"]) == ["group", "groups", "steps", "reason", "rows"]
    assert j["invariance"]["groups"] == {"a": 60, "b": 60}
    assert list(j["irt"]["extraversion"]) == [
        "n",
        "model",
        "items",
        "information",
        "reason",
        "rows",
        "note",
    ]
    assert list(j["reliability"][0]) == [
        "scale",
        "n",
        "k",
        "n_personas",
        "reason",
        "coefficients",
        "rows",
    ]
    assert list(j["variance_ratio"][0]) == ["scale", "ratio", "population_sd", "human_sd", "reason"]
    assert list(j["distributions"]["extraversion"]["norm"]) == ["mean", "sd", "source", "group"]
    json.dumps(j, allow_nan=True)  # JSON-able as it is


def test_json_values_are_the_records(entries: tuple[PopulationEntry, PopulationEntry]) -> None:
    _, e = entries
    j = e.to_json()
    ext = e.cfa["extraversion"]
    assert ext.fit is not None and j["cfa"]["extraversion"]["fit"]["cfi"] == ext.fit.cfi
    assert j["acquiescence"] == e.human.acquiescence
    assert j["parallel_analysis"]["observed"] == list(e.structure.parallel_analysis.observed)
    assert e.structure.efa is not None and j["efa"]["loadings"] == e.structure.efa.loadings
    assert e.irt is not None
    assert j["irt"]["extraversion"]["n"] == e.irt["extraversion"].n
    text = "\n".join(task_text("bfi", e))
    assert "invariance by grp (a 60, b 60)" in text and "EFA (ml, oblimin, 1 factor(s))" in text
