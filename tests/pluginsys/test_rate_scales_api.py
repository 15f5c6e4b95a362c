"""A plugin's administration mode that rates whole scales itself (``Administration.rate_scales``,
as ``interview-expert`` does), written with ``psymetrics_core.api`` only, as a plugin must be
(pyproject's import-linter contract): its scale scores replace the ``score`` hook's for those
scales, with the reason of a None score, and the other scales keep the items' scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psymetrics_core.api import (
    Administration,
    Answer,
    Condition,
    Instrument,
    Item,
    RatedScale,
    ScaleScore,
    evaluate,
    hookimpl,
)
from tests.pluginsys.test_hooks import ScriptedBackend, pm_with  # noqa: F401 -- the fixture


class ScaleRater(Administration):
    """Every item answered 2 (asks the model nothing); extraversion rated 4.5 as a whole and
    neuroticism left unrated with a reason (the rest scored from the items by the hook)."""

    name = "scale-rater"

    def administer(self, run: Any, items: list[Item]) -> list[tuple[Item, Answer]]:
        return [(it, Answer(2, "ok")) for it in items]

    def rate_scales(
        self, inst: Instrument, form: str, answers: Sequence[tuple[Item, Answer]]
    ) -> dict[str, RatedScale]:
        n = {s: sum(1 for it, _ in answers if s in it.scales) for s in inst.scales}
        return {
            "extraversion": RatedScale(
                ScaleScore("extraversion", 4.5, n["extraversion"], n["extraversion"], "rated")
            ),
            "neuroticism": RatedScale(
                ScaleScore("neuroticism", None, n["neuroticism"], 0, "rated"),
                "the rater gave no score",
            ),
        }


class Plug:
    @hookimpl
    def register_administrations(self, register: Any) -> None:
        register("scale-rater", ScaleRater(), description="rates scales itself")

    @hookimpl
    def register_conditions(self, register: Any) -> None:
        cond = Condition("scale-rater", facet="administration", administration="scale-rater")
        register("scale-rater", lambda arg: cond, facet="administration")


def test_a_plugin_mode_rating_scales_through_the_public_api(pm_with: Any) -> None:  # noqa: F811
    session = pm_with(Plug())
    backend = ScriptedBackend("1")
    res = evaluate(["bfi"], backend=backend, conditions=["scale-rater"], session=session)
    assert backend.calls == 0
    scales = res["tasks"]["bfi"]["scales"]
    assert scales["extraversion"]["score"] == 4.5  # the mode's, not the items' (all 2)
    assert scales["neuroticism"]["score"] is None
    assert scales["neuroticism"]["reason"] == "the rater gave no score"
    # openness from its items by the hook: every item answered 2, reverse keys 6 - 2 = 4;
    # bfi's openness has 10 items, 2 reverse-keyed (35, 41): (8 * 2 + 2 * 4) / 10 = 2.4
    assert scales["openness"]["score"] == 2.4
