"""The real default model (SmolLM2-135M) as the interview's judge by option scoring
(``--condition interview-logprob``): it cannot write readable ``ID: VALUE`` lines (it echoes the
list of options), but scored it gives every answer a rating.

Five BFI items with short open answers are put to the judge as the interview does
(``convert_by_scores`` through the run's ``Judge``). Every rating is read (an option or "none",
never unread), and each is the most likely of the six replies the backend scored, as recorded in
``judge.jsonl``. Whether a 135M model's ratings follow the answers is not asserted (it is
measured in the closing note of issue 33 and shown by the validity indicators).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytestmark = [pytest.mark.model]

ANSWERS = {
    "1": "Yes, very much. I love chatting with everyone I meet.",
    "2": "No, I rarely criticise anyone; I look for the good in people.",
    "3": "Yes, I always finish my work carefully and on time.",
    "4": "Sometimes I feel a bit low, but not often.",
    "5": "I would rather not say.",
}


def test_the_default_model_scores_a_rating_for_every_answer(smollm2, tmp_path: Path) -> None:
    from psymetrics_core.administer.administration.interview_judge import Exchange
    from psymetrics_core.administer.administration.interview_logprob import convert_by_scores
    from psymetrics_core.administer.judge import Judge
    from psymetrics_core.api import session_or_default

    inst = session_or_default().get_instrument("bfi")
    items = [it for it in inst.items if it.id in ANSWERS]
    options = {it.id: inst.response_scales[it.response_scale].options for it in items}
    exchanges = [Exchange(it, str(it.question), ANSWERS[it.id]) for it in items]
    judge = Judge(model="smollm2", backend=smollm2, records=tmp_path / "judge.jsonl")
    try:
        ratings = convert_by_scores(judge, "bfi", exchanges, options, {})
    finally:
        judge.close()
    assert set(ratings) == set(ANSWERS)
    assert all(r.status in ("ok", "refused") for r in ratings.values()), ratings
    lines = [json.loads(x) for x in (tmp_path / "judge.jsonl").read_text().splitlines()]
    assert len(lines) == 5 and judge.n_calls == 5
    for line in lines:
        scored = line["verdict"]["value"]["logprobs"]
        assert list(scored) == ["1", "2", "3", "4", "5", "none"]
        assert all(math.isfinite(v) and v < 0 for v in scored.values())
        chosen = line["verdict"]["value"]["rating"]
        assert scored[chosen] == max(scored.values())
        r = ratings[line["item"]]
        assert (r.value, r.status) == (
            (None, "refused") if chosen == "none" else (int(chosen), "ok")
        )
