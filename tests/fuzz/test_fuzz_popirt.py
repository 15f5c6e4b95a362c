"""Fuzz cases of the graded response model (``psym analyze --task bfi --responses FILE --irt``,
issue 25): degenerate answers must give, per scale, no numbers and a reason naming the items
(never a traceback, never estimates from a failed fit); a missing extra and ``--irt`` without a
population run must end in one line."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness import expect_clean_error, shared_session
from test_fuzz_hints import check_hint

from psymetrics_core.analysis.population.data import ScaleStructure
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.population.runs import population_section
from psymetrics_core.analysis.responses import analyze_responses
from psymetrics_core.pluginsys.session import Session

N = 300
IRT = PopulationOptions(n_boot=0, irt=True)


@pytest.fixture(scope="module")
def session() -> Session:
    return shared_session()


def _good(session: Session) -> pd.DataFrame:
    """BFI-44 answers 1..5 from one GRM per scale (reverse-keyed items stored reversed), long."""
    structure = ScaleStructure.from_instrument(session.get_instrument("bfi"))
    rng = np.random.default_rng(7)
    cols = {}
    for items in structure.scales.values():
        theta = rng.standard_normal(N)
        for item in items:
            b = np.sort(rng.normal(0.0, 1.0, 4))
            above = 1 / (1 + np.exp(-1.5 * (theta[:, None] - b)))
            x = 1 + (rng.random(N)[:, None] < above).sum(axis=1)
            cols[item] = 6 - x if item in structure.reverse else x
    wide = pd.DataFrame(cols).assign(respondent=[f"r{i}" for i in range(N)])
    return wide.melt("respondent", var_name="item", value_name="response")


def _set(item: str, value: object) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def change(d: pd.DataFrame) -> pd.DataFrame:
        d = d.astype({"response": object})
        d.loc[d["item"] == item, "response"] = value
        return d

    return change


def _guttman(d: pd.DataFrame) -> pd.DataFrame:
    """Every keyed answer of a respondent the same (1 or 5): each item is all the others."""
    rev = set(ScaleStructure.from_instrument(shared_session().get_instrument("bfi")).reverse)
    high = d["respondent"].str[1:].astype(int) % 2 == 1
    keyed = np.where(high, 5, 1)
    return d.assign(response=np.where(d["item"].isin(rev), 6 - keyed, keyed))


def _flip(item: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The answers of a reverse-keyed item stored unreversed (the key applied twice)."""

    def change(d: pd.DataFrame) -> pd.DataFrame:
        d = d.copy()
        at = d["item"] == item
        d.loc[at, "response"] = 6 - d.loc[at, "response"]
        return d

    return change


DEGENERATE: list[tuple[str, Callable[[pd.DataFrame], pd.DataFrame], str, str]] = [
    # name, change to the long data, scale, expected fragment of its reason
    ("constant-item", _set("1", 3), "extraversion", "items that never vary: 1"),
    ("never-answered-item", _set("1", ""), "extraversion", "items never answered: 1"),
    (
        "straight-lining",
        lambda d: d.assign(response=3),
        "openness",
        "items that never vary: 5, 10, 15, 20, 25, 30, 35, 40, 41, 44",
    ),
    (
        "few-respondents",
        lambda d: d[d["respondent"].isin([f"r{i}" for i in range(9)])],
        "neuroticism",
        "9 respondents for",
    ),
    (
        "one-respondent",
        lambda d: d[d["respondent"] == "r0"],
        "agreeableness",
        "items that never vary",
    ),
    (
        "two-items-of-a-scale",
        lambda d: d[d["item"].isin(["1", "6"])],
        "extraversion",
        "2 item(s) (1, 6); the model needs at least 3",
    ),
    (
        "acquiescence",
        lambda d: d.assign(response=d["respondent"].str[1:].astype(int) % 5 + 1),
        "extraversion",
        "items negatively related to the rest of the scale (item-rest r < 0; a "
        "reverse key missing?): 6 (r -1.00), 21 (r -1.00), 31 (r -1.00)",
    ),
    (
        "guttman",
        _guttman,
        "conscientiousness",
        "discrimination at the upper bound 5 (answers determined by the others): 3, 8, 13",
    ),
    (
        "item-reversed-twice",
        _flip("6"),
        "extraversion",
        "items negatively related to the rest of the scale (item-rest r < 0; a reverse key "
        "missing?): 6 (r -",
    ),
]


@pytest.mark.parametrize(
    ("name", "change", "scale", "expect"), DEGENERATE, ids=[c[0] for c in DEGENERATE]
)
def test_fuzz_irt_degenerate_answers(
    tmp_path: Path, session: Session, name: str, change: Callable, scale: str, expect: str
) -> None:
    """The model is fitted per scale, so each case keeps the items of the scale it checks (the
    other scales' undisturbed fits are the control's, below)."""
    path = tmp_path / "long.csv"
    items = ScaleStructure.from_instrument(session.get_instrument("bfi")).scales[scale]
    data = change(_good(session))
    data[data["item"].isin(items)].to_csv(path, index=False)
    rep = analyze_responses("bfi", path, session, population=IRT)
    irt = rep["population"]["all"].irt
    got = irt[scale]
    assert got.items == [] and got.information is None, name
    assert expect in (got.reason or ""), (name, got.reason)


def test_fuzz_irt_good_data_has_numbers(tmp_path: Path, session: Session) -> None:
    """The control of the cases above: the undisturbed data give every scale its numbers."""
    path = tmp_path / "long.csv"
    _good(session).to_csv(path, index=False)
    irt = analyze_responses("bfi", path, session, population=IRT)["population"]["all"].irt
    assert all(r.reason is None and len(r.items) >= 8 for r in irt.values()), irt


ERRORS = ["missing-extra", "no-population-run"]


@pytest.mark.parametrize("name", ERRORS)
def test_fuzz_irt_one_line(
    tmp_path: Path, session: Session, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    path = tmp_path / "long.csv"
    _good(session).to_csv(path, index=False)
    if name == "missing-extra":
        monkeypatch.setitem(sys.modules, "mirt", None)  # import mirt -> ImportError
        out = expect_clean_error(
            lambda: analyze_responses("bfi", path, session, population=IRT),
            ["--irt"],
            label=name,
        )
        assert "pip install 'psymetrics-core[analysis,irt]'" in out.message, out.message
        assert check_hint(out.message) == ["psymetrics-core[analysis,irt]"]
    else:
        out = expect_clean_error(
            lambda: population_section([tmp_path], session.instruments(), IRT),
            ["--irt"],
            label=name,
        )
        assert out.message == "--irt: no run here was given to a population (--population)"
