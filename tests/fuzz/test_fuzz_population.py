"""Fuzz cases of the population analyses (issue 25): malformed population data and models
end in one PsymError line naming the column, item or respondent; degenerate data give a
result that is None with a reason, never a traceback and never numbers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from harness import expect_clean_error

from psymetrics_core.analysis.population.cfa import cfa
from psymetrics_core.analysis.population.criterion import auc, spearman
from psymetrics_core.analysis.population.data import Responses, ScaleStructure, from_long, from_wide
from psymetrics_core.analysis.population.dimensionality import efa, parallel_analysis
from psymetrics_core.analysis.population.invariance import measurement_invariance
from psymetrics_core.analysis.population.reliability import scale_reliability

RNG = np.random.default_rng(0)
GOOD = pd.DataFrame(RNG.integers(1, 6, (60, 4)).astype(float), columns=list("abcd"))
LONG = GOOD.reset_index(names="respondent").melt("respondent", var_name="item")
LONG["persona"] = LONG["respondent"] % 7
LONG["school"] = np.where(LONG["respondent"] % 2 == 0, "p", "g")
STRUCT = ScaleStructure({"S": ("a", "b", "c", "d")})


def _long_dup() -> pd.DataFrame:
    return pd.concat([LONG, LONG.head(1)])


def _long_text() -> pd.DataFrame:
    d = LONG.astype({"value": object})
    d.loc[5, "value"] = "strongly agree"
    return d


def _long_two_groups() -> pd.DataFrame:
    d = LONG.copy()
    d.loc[0, "school"] = "other"
    return d


MALFORMED: dict[str, tuple[Callable[[], Any], list[str]]] = {
    "long_missing_value_column": (lambda: from_long(LONG.drop(columns="value")), ["value"]),
    "long_missing_group_column": (lambda: from_long(LONG, group="class"), ["class"]),
    "long_duplicate_answer": (lambda: from_long(_long_dup()), ["respondent 0", "item 'a'"]),
    "long_text_value": (lambda: from_long(_long_text()), ["strongly agree"]),
    "long_group_varies_within_respondent": (
        lambda: from_long(_long_two_groups(), group="school"),
        ["respondent 0"],
    ),
    "wide_missing_item": (lambda: from_wide(GOOD, items=["a", "zz"]), ["zz"]),
    "structure_item_not_in_data": (
        lambda: scale_reliability(Responses(GOOD), ScaleStructure({"S": ("a", "q")})),
        ["q"],
    ),
    "cfa_unparseable_model": (lambda: cfa(GOOD, "f =~ =~ a"), ["lavaan syntax"]),
    "cfa_variable_not_in_data": (lambda: cfa(GOOD, "f =~ a + b + zz"), ["zz"]),
    "invariance_without_group": (
        lambda: measurement_invariance(Responses(GOOD), STRUCT),
        ["group"],
    ),
    "invariance_regression_line": (
        lambda: measurement_invariance(from_long(LONG, group="school"), "a ~ b"),
        ["line 1"],
    ),
    "efa_unknown_rotation": (lambda: efa(GOOD, 1, rotation="twirl"), ["twirl"]),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_population_input_is_one_line(case: str) -> None:
    fn, names = MALFORMED[case]
    expect_clean_error(fn, names, label=case)


def _const() -> pd.DataFrame:
    return GOOD.assign(c=3.0)


def _dependent() -> pd.DataFrame:
    return GOOD.assign(d=GOOD["a"] + GOOD["b"])


DEGENERATE: dict[str, tuple[Callable[[], Any], str]] = {
    "cfa_constant_item": (lambda: cfa(_const(), STRUCT).reason, "items that never vary: c"),
    "cfa_dependent_items": (lambda: cfa(_dependent(), STRUCT).reason, "dependent items"),
    "cfa_too_few_rows": (lambda: cfa(GOOD.head(5), STRUCT).reason, "5 complete respondents"),
    "reliability_constant_item": (
        lambda: scale_reliability(Responses(_const()), STRUCT, n_boot=0)[0].reason,
        "items that never vary: c",
    ),
    "invariance_group_too_small": (
        lambda: (
            measurement_invariance(
                from_long(LONG[LONG["respondent"] < 12], group="school"), STRUCT
            ).reason
        ),
        "groups too small",
    ),
    "parallel_constant_item": (lambda: parallel_analysis(_const()).reason, "never vary: c"),
    "efa_too_many_factors": (lambda: efa(GOOD, 4).reason, "4 factors for 4 items"),
    "spearman_constant_label": (
        lambda: spearman(GOOD["a"].to_numpy(), np.ones(60)).reason,
        "labels never vary",
    ),
    "auc_non_binary_label": (
        lambda: auc(GOOD["a"].to_numpy(), GOOD["b"].to_numpy()).reason,
        "must be 0/1",
    ),
}


@pytest.mark.parametrize("case", sorted(DEGENERATE))
def test_degenerate_population_data_give_a_reason(case: str) -> None:
    fn, expected = DEGENERATE[case]
    reason = fn()
    assert isinstance(reason, str) and expected in reason, (case, reason)
