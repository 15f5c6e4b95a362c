"""The real default model (SmolLM2-135M-Instruct on CPU), kept small: the first 4 BFI items,
every probe, 19 permutations. Values are whatever the model does; the test checks that every
metric is computed from real answers with its interval, and that the months control order is
more likely than every permutation (p = 1/20), i.e. the order test has power on this model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from psymetrics_plugin_contamination.options import PROBES, ProbeOptions
from psymetrics_plugin_contamination.run import contamination

from psymetrics_core.api import session_or_default

pytestmark = pytest.mark.model


def test_every_probe_on_smollm2(tmp_path: Path) -> None:
    rep = contamination(
        ["bfi"],
        probes=PROBES,
        permutations=19,
        limit=4,
        options=ProbeOptions(bootstrap=200),
        output=tmp_path,
        session=session_or_default(),
    )
    probes = rep["tasks"]["bfi"]["probes"]
    for name in ("verbatim", "keyword", "item-dimension", "option-score", "target-score"):
        pr = probes[name]
        assert pr["n_prompts"] > 0, name
        assert pr["n_parsed"] + pr["n_refused"] + pr["n_invalid"] + pr["n_empty"] == pr["n_prompts"]
        if pr["value"] is not None:
            assert pr["ci_low"] is not None and pr["ci_low"] <= pr["value"] <= pr["ci_high"]
        else:
            assert pr["reason"]
    assert probes["verbatim"]["value"] is not None  # every answer counts, refusals included
    # the local backend says which answers hit their budget (finish_reason "length")
    for name in ("verbatim", "keyword", "item-dimension", "option-score", "target-score"):
        assert probes[name]["n_truncation_unknown"] == 0, name
    order = probes["order"]
    assert order["n_prompts"] == 4 * 20  # bfi + 3 controls, each canonical + 19 permutations
    assert order["detail"]["positive_controls"]["months"]["p"] == pytest.approx(1 / 20)
    # one model call per distinct request: with 4 items only 23 orderings exist, so some of
    # the 19 seeded permutations repeat, and identical requests are asked once
    samples = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == sum(pr["n_prompts"] for pr in probes.values())
    for s in samples:
        if s["item_meta"]["meta"]["probe"] != "order":
            assert isinstance(s["data"]["truncated"], bool)
    print({n: probes[n]["n_truncated"] for n in probes if n != "order"})
    distinct = {
        (json.dumps(s["prompt"], sort_keys=True), s["item_meta"]["meta"].get("max_new_tokens"))
        for s in samples
    }
    assert rep["cache"]["misses"] == len(distinct)
    again = contamination(
        ["bfi"],
        probes=PROBES,
        permutations=19,
        limit=4,
        options=ProbeOptions(bootstrap=200),
        output=tmp_path / "again",
        session=session_or_default(),
    )
    assert again["cache"]["misses"] == 0
