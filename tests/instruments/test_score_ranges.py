"""The printed range of each scale is its score range, from the scoring rule (issue 31, item 2):
every installed questionnaire's scores of random valid answers fall inside the range the
screens print, and the 16-type test (a plugin ``score`` hook mapping the mean onto 0-100) prints
0–100, not its answers' 1–7."""

from __future__ import annotations

import random

import pytest

from psymetrics_core.administer.ranges import range_text, score_range
from psymetrics_core.base.types import Answer
from psymetrics_core.instruments.scoring import scale_range
from psymetrics_core.pluginsys.session import Session

RESPONDENTS = 40  # random answer sets per instrument and form


def _questionnaires(session: Session) -> list[str]:
    return sorted(t for t, inst in session.instruments().items() if inst.kind == "questionnaire")


def test_every_instrument_scores_inside_its_printed_range() -> None:
    session = Session()
    tasks = _questionnaires(session)
    assert len(tasks) >= 10, tasks  # the plugins of this checkout are installed
    rng = random.Random(31)
    checked = 0
    for task in tasks:
        inst = session.get_instrument(task)
        for form, items in inst.forms.items():
            spans = {s: score_range(session, inst, s, form) for s in inst.scales}
            for _ in range(RESPONDENTS):
                raw = {it.id: rng.choice(inst.response_scale_for(it).values()) for it in items}
                answers = {k: Answer(v, "ok") for k, v in raw.items()}
                scores = session.hook.score(
                    instrument=inst, responses=raw, form=form, answers=answers
                )
                for scale, span in spans.items():
                    got = scores[scale].score if scale in scores else None
                    if span is None or got is None:
                        continue
                    lo, hi = span
                    assert lo - 1e-9 <= got <= hi + 1e-9, (
                        f"{task} ({form}) {scale}: score {got} outside the printed range "
                        f"{range_text(span)}"
                    )
                    checked += 1
    assert checked > 1000, checked


def test_ranges_without_a_plugin_hook_agree_with_the_spec_rule() -> None:
    """Where no plugin scores the task, the hook's extremes are the spec's mean/sum rule."""
    session = Session()
    for task in ("bfi", "bdi2", "mfq"):
        inst = session.get_instrument(task)
        for scale in inst.scales:
            assert score_range(session, inst, scale) == scale_range(inst, scale), (task, scale)


def test_16p_prints_0_to_100() -> None:
    """16p's dimensions are (mean - 1) / 6 * 100 of 1-7 answers (its scoring_rule): 0-100."""
    session = Session()
    inst = session.get_instrument("16p")
    for scale in inst.scales:
        assert range_text(score_range(session, inst, scale) or (0, 0)) == "0–100"


def test_no_fixed_range_for_a_centred_scale() -> None:
    """An MRAT-centred scale (PVQ's values) depends on the other answers: no range printed."""
    session = Session()
    centred = [
        (t, s)
        for t in _questionnaires(session)
        for s, d in session.get_instrument(t).scales.items()
        if d.centre
    ]
    if not centred:
        pytest.skip("no installed instrument has an MRAT-centred scale")
    task, scale = centred[0]
    assert score_range(session, session.get_instrument(task), scale) is None
