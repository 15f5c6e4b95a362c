"""End to end on the real default model (SmolLM2-135M-Instruct on CPU), both answer modes.

These tests run the installed ``psym`` console script exactly as a newcomer would.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# the runs of bfi,mfq on the default model share one worker, and so the session's response
# cache, with test_docs' first-run command and test_report_browser's runs (tests/scheduling.py)
pytestmark = [pytest.mark.model, pytest.mark.xdist_group("smollm2-bfi-mfq")]

BFI_SCALES = ["extraversion", "agreeableness", "conscientiousness", "neuroticism", "openness"]
MFQ_SCALES = ["care", "fairness", "loyalty", "authority", "purity"]


def _psym() -> str:
    exe = Path(sys.executable).with_name("psym")
    assert exe.exists(), "the psym console script is not installed next to this Python"
    return str(exe)


@pytest.fixture(scope="module", params=["generate", "logprob"])
def run(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"run-{request.param}")
    proc = subprocess.run(
        [_psym(), "eval", "--tasks", "bfi,mfq", "--mode", request.param, "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        env=os.environ.copy(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return request.param, out, proc


def test_table_shows_every_scale_and_parse_rate(run):
    mode, _, proc = run
    for scale in BFI_SCALES + MFQ_SCALES:
        assert scale in proc.stdout
    # one parse-rate row per task in the score table ("N/M parsed, ..."); the validity
    # indicators table below it has a "parse rate" column of its own
    assert len(re.findall(r"\b\d+/(?:44|32) parsed", proc.stdout)) == 2
    assert "parse rate" in proc.stdout
    assert f"mode: {mode}" in proc.stdout


def test_results_json(run):
    mode, out, _ = run
    res = json.loads((out / "results.json").read_text())
    assert res["settings"]["mode"] == mode and res["seed"] == 1234
    assert res["backend"]["backend"] == "smollm2"
    assert res["backend"]["gguf_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert res["plugins"]["bfi"]["distribution"] == "psymetrics-plugin-bfi"
    assert res["psymetrics"]
    for task, scales, n, (lo, hi) in (
        ("bfi", BFI_SCALES, 44, (1, 5)),
        ("mfq", MFQ_SCALES, 32, (0, 5)),
    ):
        entry = res["tasks"][task]
        assert list(entry["scales"]) == scales
        assert entry["n_items"] == n
        assert entry["n_answered"] + entry["n_unparsed"] + entry["n_refused"] == n
        assert entry["instrument"]["citation"] and entry["instrument"]["license_status"]
        for s in entry["scales"].values():
            if s["n_answered"]:
                assert lo <= s["score"] <= hi
        if mode == "logprob":
            assert entry["parse_rate"] == 1.0


def test_samples_jsonl_has_one_line_per_item(run):
    mode, out, _ = run
    lines = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert len(lines) == 44 + 32
    first = lines[0]
    assert first["task"] == "bfi" and first["item"] == "1"
    assert "I see myself as someone who is talkative." in first["rendered_prompt"]
    for rec in lines:
        assert rec["parse_status"] in ("ok", "unparsed", "refused")
        if mode == "logprob":
            probs = rec["option_probs"]
            assert math.isclose(sum(probs.values()), 1.0, rel_tol=1e-6)
            best = max(probs, key=lambda k: probs[k])
            assert int(best) == rec["answer"]
        else:
            assert isinstance(rec["completion"], str)
            assert (rec["answer"] is None) == (rec["parse_status"] != "ok")


def test_scores_follow_from_samples(run):
    """Recompute each BFI scale from samples.jsonl with the key (independent of the scorer)."""
    _, out, _ = run
    res = json.loads((out / "results.json").read_text())
    answers = {
        r["item"]: r["answer"]
        for r in map(json.loads, (out / "samples.jsonl").read_text().splitlines())
        if r["task"] == "bfi"
    }
    reverse = {2, 6, 8, 9, 12, 18, 21, 23, 24, 27, 31, 34, 35, 37, 41, 43}  # John & Srivastava
    e_items = [1, 6, 11, 16, 21, 26, 31, 36]
    vals = [
        6 - answers[str(i)] if i in reverse else answers[str(i)]
        for i in e_items
        if answers[str(i)] is not None
    ]
    expected = sum(vals) / len(vals) if vals else None
    assert res["tasks"]["bfi"]["scales"]["extraversion"]["score"] == pytest.approx(expected)


def test_loglikelihoods_match_a_direct_forward_pass(smollm2):
    """The backend's option log-likelihoods equal log-softmax of one plain full forward pass."""
    import torch

    from psymetrics_core import get_instrument
    from psymetrics_core.pluginsys.defaults.render import render_prompt

    inst = get_instrument("bfi")
    prompt = render_prompt(inst, inst.items[0])
    context = smollm2.context_text(prompt)
    got = smollm2.loglikelihoods(context, ["1", "2", "3", "4", "5"])
    tok, model = smollm2._tok, smollm2._model
    with torch.inference_mode():
        ids = tok(context, return_tensors="pt", add_special_tokens=False)["input_ids"]
        logp = torch.log_softmax(model(input_ids=ids).logits[0, -1].double(), dim=-1)
    want = [float(logp[tok.convert_tokens_to_ids(d)]) for d in "12345"]
    assert got == pytest.approx(want, abs=1e-4)
