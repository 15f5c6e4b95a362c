"""Logprob mode records ``option_mass``: the options' total probability before renormalising
(issue 34's log-probability distribution); generate-mode samples do not gain the field."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from psymetrics_core.administer.kinds.questionnaire import option_mass
from psymetrics_core.base.types import Completion, Option

PROBS = (0.05, 0.10, 0.20, 0.30, 0.15)  # sums to 0.80: 0.20 fell outside the options


class _Scoring:
    """A scripted model (unit tests only): fixed option probabilities, "3" when generating."""

    def identity(self) -> dict[str, str]:
        return {"backend": "scoring"}

    def generate(self, prompts, settings, progress=None):
        return [Completion(text="3") for _ in prompts]

    def option_logprobs(self, prompts, settings, progress=None):
        return [Completion(option_logprobs=tuple(math.log(p) for p in PROBS)) for _ in prompts]


def _samples(path: Path) -> list[dict]:
    return [json.loads(x) for x in (path / "samples.jsonl").read_text().splitlines()]


def test_logprob_samples_record_the_mass_before_renormalising(fresh_plugins, tmp_path: Path):
    from psymetrics_core.administer.runner import evaluate

    res = evaluate(
        ["bfi"],
        backend=_Scoring(),
        limit=2,
        mode="logprob",
        output=tmp_path,
        session=fresh_plugins,
    )
    first = _samples(tmp_path)[0]
    assert first["option_mass"] == pytest.approx(0.80)  # 0.05 + 0.10 + 0.20 + 0.30 + 0.15
    assert first["option_probs"]["4"] == pytest.approx(0.30 / 0.80)  # renormalised by hand
    assert first["answer"] == 4  # the argmax, as before
    dist = res["distribution"]["item-by-item"]
    assert dist["method"] == "logprob" and dist["field"] == "option_probs"


def test_generate_samples_do_not_gain_the_field(fresh_plugins, tmp_path: Path):
    from psymetrics_core.administer.runner import evaluate

    res = evaluate(
        ["bfi"],
        backend=_Scoring(),
        limit=2,
        repeats=3,
        temperature=0.7,
        output=tmp_path,
        session=fresh_plugins,
    )
    assert all("option_mass" not in s for s in _samples(tmp_path))
    dist = res["distribution"]["item-by-item"]
    assert dist["method"] == "sampled" and dist["field"] == "answer"
    assert (dist["cells"], dist["repeats"], dist["per_item"]) == (1, 3, 3)
    assert "temperature 0.7" in dist["description"]


def test_an_option_missing_from_the_top_logprobs_adds_nothing():
    opts = [Option(1, "a"), Option(2, "b")]
    assert option_mass(opts, (math.log(0.4), float("-inf"))) == (pytest.approx(0.4), None)


def test_overlapping_continuations_have_no_mass_and_say_why():
    opts = [Option(v, str(v)) for v in range(1, 11)]  # "1" is a prefix of "10"
    value, why = option_mass(opts, tuple(math.log(0.05) for _ in opts))
    assert value is None
    assert why.startswith("option '1' is a prefix of option '10'")


def test_a_sum_above_one_is_not_a_mass():
    opts = [Option(1, "a"), Option(2, "b")]
    value, why = option_mass(opts, (math.log(0.7), math.log(0.6)))
    assert value is None and "sum to 1.3" in why
