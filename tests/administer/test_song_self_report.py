"""Song et al.'s (2025) self-report protocol runs today: PVQ-21 in its third-person form and BFI-10,
each in both option orders (the ``original`` and ``reversed-options`` conditions of one run), the
profile being the mean of the two orders per scale, read from ``psym export scores``'s table.

A scripted respondent with a pure position bias (it always takes the first listed option) scores
1 on every PVQ value in the printed order and 6 in the reversed one, so the two-order mean is 3.5
(by hand: (1 + 6) / 2), the bias cancelled: that is why Song et al. average both orders.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from behaviour_fakes import ScriptedBackend
from psymetrics_plugin_value_portrait.data import VALUES

from psymetrics_core.administer.runner import evaluate
from psymetrics_core.export.tidy import scores_table
from psymetrics_core.pluginsys.session import Session

ORDERS = ["original", "reversed-options"]


def _first_option(prompt: str) -> str:
    return re.search(r"Answer options:\n(\d+) ", prompt).group(1)


@pytest.fixture(scope="module")
def pvq_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ScriptedBackend]:
    out = tmp_path_factory.mktemp("song") / "pvq21"
    backend = ScriptedBackend(_first_option)
    evaluate(
        ["pvq21"],
        backend=backend,
        session=Session(),
        output=out,
        form="third_person",
        conditions=ORDERS,
    )
    return out, backend


def test_both_orders_of_the_third_person_form_are_asked(pvq_run) -> None:
    _, backend = pvq_run
    assert len(backend.seen) == 2 * 21
    assert all("Description: " in p for p in backend.seen)
    assert sum("important to them to be rich. They want" in p for p in backend.seen) == 2
    assert not any(" him" in p or " her" in p for p in backend.seen)
    firsts = sorted(_first_option(p) for p in backend.seen)
    assert firsts == ["1"] * 21 + ["6"] * 21  # printed order, then reversed (values kept)


def test_the_two_order_mean_cancels_a_position_bias(pvq_run) -> None:
    run, _ = pvq_run
    scores = scores_table([run]).filter(pl.col("scale").is_in(VALUES))
    per_order = {(r["condition"], r["scale"]): r["score"] for r in scores.iter_rows(named=True)}
    for value in VALUES:
        assert per_order["original", value] == 1.0
        assert per_order["reversed-options", value] == 6.0
    # the docs' recipe (guides/questionnaires.md, "Song et al.'s self-report side")
    profile = (
        scores.filter(pl.col("condition").is_in(ORDERS))
        .group_by("task", "scale", maintain_order=True)
        .agg(pl.col("score").mean(), pl.col("score").count().alias("orders"))
    )
    assert profile["score"].to_list() == [3.5] * len(VALUES)
    assert profile["orders"].to_list() == [2] * len(VALUES)


def test_bfi10_label_stays_attached_to_its_value(tmp_path: Path) -> None:
    """A respondent who always picks the label "Agree strongly" answers 5 in both orders: each
    trait is (5 + (6 - 5)) / 2 = 3.0 per order (one forward and one reverse-keyed item each)."""

    def agree_strongly(prompt: str) -> str:
        return re.search(r"(\d+) Agree strongly", prompt).group(1)

    backend = ScriptedBackend(agree_strongly)
    results = evaluate(
        ["bfi10"], backend=backend, session=Session(), output=tmp_path / "r", conditions=ORDERS
    )
    runs = results["tasks"]["bfi10"]["runs"]
    assert [r["condition"] for r in runs] == ORDERS
    assert {agree_strongly(p) for p in backend.seen} == {"5"}
    assert sum("I see myself as someone who is reserved." in p for p in backend.seen) == 2
    for r in runs:
        assert {s: v["score"] for s, v in r["scales"].items()} == {
            t: 3.0
            for t in (
                "extraversion",
                "agreeableness",
                "conscientiousness",
                "neuroticism",
                "openness",
            )
        }
