"""The run configuration of ``evaluate`` (issue 23, item 3): malformed options are refused
before a plugin is loaded or a model built — a ``TypeError`` naming an unknown keyword (a
programming error of the caller), a one-line ``PsymError`` for a value out of range."""

from __future__ import annotations

import dataclasses

import pytest

import psymetrics_core as psym
from psymetrics_core.administer.config import RunConfig
from psymetrics_core.administer.runner import check_run, evaluate
from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.session import Session


def test_an_unknown_keyword_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\): modle, seeed"):
        psym.evaluate(["bfi"], modle="smollm2", seeed=1)


def test_config_and_keywords_together_are_refused() -> None:
    with pytest.raises(TypeError, match="config= and options"):
        psym.evaluate(["bfi"], config=RunConfig(), limit=2)
    with pytest.raises(TypeError, match="not both"):
        evaluate(["bfi"], RunConfig(), limit=2, session=Session(autoload=False))


def test_the_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        RunConfig().limit = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "changes, expect",
    [
        ({"mode": "sample"}, "--mode must be one of"),
        ({"limit": 0}, "--limit must be an integer in 1-1,000,000"),
        ({"limit": -5}, "--limit must be an integer in 1-1,000,000"),
        ({"repeats": 0}, "--repeats must be an integer in 1-1000"),
        ({"temperature": -1.0}, "temperature"),
        ({"max_new_tokens": 0}, "max-new-tokens"),
    ],
)
def test_values_out_of_range_are_one_line_errors(changes: dict, expect: str) -> None:
    with pytest.raises(PsymError) as err:
        check_run(["bfi"], RunConfig().replace(**changes))
    assert expect in str(err.value) and "\n" not in str(err.value)


def test_no_tasks_is_a_one_line_error() -> None:
    with pytest.raises(PsymError, match="no tasks given"):
        check_run([], RunConfig())
