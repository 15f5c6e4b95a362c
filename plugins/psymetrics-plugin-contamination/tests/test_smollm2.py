"""The real default model (SmolLM2-135M-Instruct on CPU), kept small: every probe, the order
test on the first 4 BFI items with 19 permutations, the five generation probes on the first 2
(one item of each of two dimensions, so item-dimension F1 is defined; the model's work grows
with the items, not the property). Values are whatever the model does; the test checks that
every metric is computed from real answers with its interval, and that the months control order
is more likely than every permutation (p = 1/20), i.e. the order test has power on this model.
Both runs use one loaded model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from psymetrics_plugin_contamination.options import PROBES, ProbeOptions
from psymetrics_plugin_contamination.run import contamination

from psymetrics_core.api import DEFAULT_MODEL, session_or_default

pytestmark = [pytest.mark.model, pytest.mark.integration]  # every probe on the real model

GENERATE = ("verbatim", "keyword", "item-dimension", "option-score", "target-score")


def _probe(out: Path, probes: tuple[str, ...], limit: int, model: Any) -> dict[str, Any]:
    return contamination(
        ["bfi"],
        probes=probes,
        permutations=19,
        limit=limit,
        options=ProbeOptions(bootstrap=200),
        output=out,
        backend=model,
        session=session_or_default(),
    )


def _samples(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]


def _distinct(samples: list[dict[str, Any]]) -> int:
    return len(
        {
            (json.dumps(s["prompt"], sort_keys=True), s["item_meta"]["meta"].get("max_new_tokens"))
            for s in samples
        }
    )


def test_every_probe_on_smollm2(tmp_path: Path) -> None:
    assert set(GENERATE) | {"order"} == set(PROBES)
    model = session_or_default().make_backend(DEFAULT_MODEL)
    rep = _probe(tmp_path / "gen", GENERATE, 2, model)
    probes = rep["tasks"]["bfi"]["probes"]
    for name in GENERATE:
        pr = probes[name]
        assert pr["n_prompts"] > 0, name
        assert pr["n_parsed"] + pr["n_refused"] + pr["n_invalid"] + pr["n_empty"] == pr["n_prompts"]
        if pr["value"] is not None:
            assert pr["ci_low"] is not None and pr["ci_low"] <= pr["value"] <= pr["ci_high"]
        else:
            assert pr["reason"]
    assert probes["verbatim"]["value"] is not None  # every answer counts, refusals included
    # the local backend says which answers hit their budget (finish_reason "length")
    for name in GENERATE:
        assert probes[name]["n_truncation_unknown"] == 0, name
    samples = _samples(tmp_path / "gen")
    assert len(samples) == sum(pr["n_prompts"] for pr in probes.values())
    for s in samples:
        assert isinstance(s["data"]["truncated"], bool)
    print({n: probes[n]["n_truncated"] for n in probes})
    assert rep["cache"]["misses"] == _distinct(samples)

    rep = _probe(tmp_path / "order", ("order",), 4, model)
    order = rep["tasks"]["bfi"]["probes"]["order"]
    assert order["n_prompts"] == 4 * 20  # bfi + 3 controls, each canonical + 19 permutations
    assert order["detail"]["positive_controls"]["months"]["p"] == pytest.approx(1 / 20)
    # one model call per distinct request: with 4 items only 23 orderings exist, so some of
    # the 19 seeded permutations repeat, and identical requests are asked once
    samples = _samples(tmp_path / "order")
    assert len(samples) == order["n_prompts"]
    assert rep["cache"]["misses"] == _distinct(samples) < len(samples)
    # the same runs again: every answer from the cache
    assert _probe(tmp_path / "again-gen", GENERATE, 2, model)["cache"]["misses"] == 0
    assert _probe(tmp_path / "again-order", ("order",), 4, model)["cache"]["misses"] == 0
