"""Parity: the exported lm-eval tasks and ``psym eval`` give the same answers on SmolLM2.

lm-eval runs on the very model and tokenizer of the ``smollm2`` fixture (wrapped in lm-eval's
own ``HFLM``), so any difference comes from the two tools' prompts, tokenisation or scoring,
which must agree: same conditioning text for every item, same continuations, same chosen
option, same parsed generation, scale scores equal to 1e-6. Two tests share one real command
line run: ``psym lm-eval`` (the real lm_eval on a fresh export) the way docs/guides/lm-eval.md
does (GGUF file, --apply_chat_template). The expensive runs (every bfi and mfq item in both
tools, the command line) are module fixtures, each computed once for the tests that read them.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("lm_eval")

pytestmark = [pytest.mark.model, pytest.mark.integration]  # the real lm_eval, full size

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "tasks"
BFI_SCALES = ("extraversion", "agreeableness", "conscientiousness", "neuroticism", "openness")
MFQ_SCALES = ("care", "fairness", "loyalty", "authority", "purity")


@pytest.fixture(scope="session")  # one per worker: the tests spread (tests/scheduling.py)
def hflm(smollm2):
    from lm_eval.models.huggingface import HFLM

    smollm2._load()
    return HFLM(pretrained=smollm2._model, tokenizer=smollm2._tok, batch_size=8, device="cpu")


def run_lm_eval(lm: Any, tasks: list[str], limit: int | None, chat: bool = True) -> dict:
    """lm-eval's Python API on the committed tasks/ folder (no default task scan)."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    tm = TaskManager(include_defaults=False, include_path=str(TASKS))
    return simple_evaluate(
        model=lm,
        tasks=tasks,
        task_manager=tm,
        limit=limit,
        apply_chat_template=chat,
        fewshot_as_multiturn=chat,
        log_samples=True,
        bootstrap_iters=0,
    )


def run_psym(
    backend: Any, tasks: list[str], mode: str, limit: int | None, out: Path, cache: bool = False
) -> dict:
    """``psym eval`` (the library call behind it) and its per-item samples by (task, item).

    ``cache``: through the session's response cache (tests/conftest.py), as ``psym eval`` on
    the default model runs, so requests another test of this session made (the first 5 items
    of the full run; test_end_to_end_model's bfi,mfq) are answered once. Only for the
    ``smollm2`` fixture itself: a copy with other settings keeps its identity's cache key."""
    from psymetrics_core import evaluate

    results = evaluate(tasks, backend=backend, mode=mode, limit=limit, output=out, cache=cache)
    samples = {}
    for line in (out / "samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        samples[(s["task"], s["item"])] = s
    return {"results": results, "samples": samples}


@functools.cache
def _installed() -> Any:
    """One session of the installed plugins for this module's look-ups."""
    from psymetrics_core.pluginsys.session import Session

    return Session()


def context_for(backend: Any, task: str, item_id: str) -> str:
    """The exact text psym's hf backend conditions on for one item."""
    session = _installed()
    inst = session.get_instrument(task)
    item = next(it for it in inst.items if it.id == item_id)
    prompt = session.hook.render_prompt(instrument=inst, item=item)
    return str(backend.context_text(prompt))


def assert_logprob_parity(backend, lm_res, psym, tasks_scales, min_items=None) -> list[str]:
    """Per item: same context, continuations, chosen option, option log-prob differences."""
    report = []
    for task, scales in tasks_scales.items():
        samples = lm_res["samples"][f"psym_{task}"]
        if min_items:
            assert len(samples) >= min_items
        for s in samples:
            item_id = s["doc"]["item_id"]
            ps = psym["samples"][(task, item_id)]
            contexts = {a[0] for a in s["arguments"]}
            assert contexts == {context_for(backend, task, item_id)}, (task, item_id)
            values = [o["value"] for o in ps["prompt"]["options"]]
            assert [a[1] for a in s["arguments"]] == [str(v) for v in values]
            lls = [r[0] for r in s["filtered_resps"]]
            chosen = values[max(range(len(lls)), key=lambda i: lls[i])]
            assert chosen == ps["answer"], (task, item_id, lls, ps["option_logprobs"])
            # lm-eval moves the chat template's trailing newline into the continuation, which
            # adds the same log p("\n" | context) to every option: differences must agree.
            psym_lp = [ps["option_logprobs"][str(v)] for v in values]
            for i in range(1, len(values)):
                assert abs((lls[i] - lls[0]) - (psym_lp[i] - psym_lp[0])) < 2e-4, (task, item_id)
        lm_scores = lm_res["results"][f"psym_{task}"]
        psym_scales = psym["results"]["tasks"][task]["scales"]
        for scale in scales:
            ours = psym_scales[scale]["score"]
            theirs = lm_scores.get(f"{scale},none")
            if ours is None:  # lm-eval: no metric, or agg_respondent's documented NaN
                assert theirs is None or math.isnan(theirs), (task, scale, theirs)
                continue
            assert abs(theirs - ours) <= 1e-6, (task, scale, theirs, ours)
            report.append(f"{task}.{scale}={ours:.4f}")
    return report


@pytest.fixture(scope="module")
def full_bfi_mfq(smollm2, hflm, tmp_path_factory) -> tuple[dict, dict]:
    """Every BFI-44 and MFQ-30 item through both tools, chat template on (psym's default for hf
    models): lm-eval's result and psym's, computed once for the tests that compare them."""
    lm_res = run_lm_eval(hflm, ["psym_bfi", "psym_mfq"], limit=None)
    out = tmp_path_factory.mktemp("full")
    psym = run_psym(smollm2, ["bfi", "mfq"], "logprob", None, out, cache=True)
    return lm_res, psym


def test_logprob_parity_full_bfi_and_mfq(smollm2, full_bfi_mfq):
    """Every BFI-44 and MFQ-30 item, chat template on (psym's default for hf models)."""
    lm_res, psym = full_bfi_mfq
    report = assert_logprob_parity(
        smollm2, lm_res, psym, {"bfi": BFI_SCALES, "mfq": MFQ_SCALES}, min_items=32
    )
    assert len(lm_res["samples"]["psym_bfi"]) == 44 and len(lm_res["samples"]["psym_mfq"]) == 32
    assert len(report) == 10
    print("logprob parity:", ", ".join(report))


def test_logprob_parity_without_chat_template(smollm2, hflm, tmp_path):
    """psym's ``chat_template=false`` and lm-eval without --apply_chat_template also agree."""
    plain = copy.copy(smollm2)
    plain.chat_template = False
    lm_res = run_lm_eval(hflm, ["psym_bfi", "psym_mfq"], limit=5, chat=False)
    psym = run_psym(plain, ["bfi", "mfq"], "logprob", 5, tmp_path)
    assert_logprob_parity(plain, lm_res, psym, {"bfi": BFI_SCALES, "mfq": MFQ_SCALES})


def test_logprob_parity_every_exported_task(smollm2, hflm, full_bfi_mfq, tmp_path):
    """The first 3 items of every task in tasks/ (system prompts, rescaled items, several
    response scales) give the same contexts, choices and scores in both tools; bfi and mfq,
    whose every item both tools have already scored (``full_bfi_mfq``), are checked on that."""
    from psymetrics_core import get_instrument

    names = sorted(p.stem for p in TASKS.glob("psym_*/psym_*.yaml") if not p.stem.endswith("_gen"))
    assert {"psym_bfi", "psym_mfq"} <= set(names) and len(names) > 2
    names = [n for n in names if n not in ("psym_bfi", "psym_mfq")]
    ids = [n.removeprefix("psym_") for n in names]
    lm_res = run_lm_eval(hflm, names, limit=3)
    psym = run_psym(smollm2, ids, "logprob", 3, tmp_path)
    scales = {t: tuple(get_instrument(t).scales) for t in ids}
    assert_logprob_parity(smollm2, lm_res, psym, scales)
    full_lm, full_psym = full_bfi_mfq
    assert_logprob_parity(smollm2, full_lm, full_psym, {"bfi": BFI_SCALES, "mfq": MFQ_SCALES})


# items 1-5 of each instrument cover all five scales of both
GEN_LIMIT = int(os.environ.get("PSYM_PARITY_GEN_LIMIT", "5"))


def test_generate_parity_greedy(smollm2, hflm, tmp_path):
    """Greedy generation: the same text and the same parsed answer for each item."""
    lm_res = run_lm_eval(hflm, ["psym_bfi_gen", "psym_mfq_gen"], limit=GEN_LIMIT)
    psym = run_psym(smollm2, ["bfi", "mfq"], "generate", GEN_LIMIT, tmp_path)
    for task, scales in (("bfi", BFI_SCALES), ("mfq", MFQ_SCALES)):
        samples = lm_res["samples"][f"psym_{task}_gen"]
        assert len(samples) == min(GEN_LIMIT, 32)
        for s in samples:
            item_id = s["doc"]["item_id"]
            ps = psym["samples"][(task, item_id)]
            assert s["arguments"][0][0] == context_for(smollm2, task, item_id)
            assert s["resps"][0][0].strip() == ps["completion"].strip(), (task, item_id)
            parsed = s["filtered_resps"][0]
            assert parsed == (str(ps["answer"]) if ps["answer"] is not None else parsed)
            if ps["answer"] is None:
                assert parsed in ("[unparsed]", "[refused]")
        lm_scores = lm_res["results"][f"psym_{task}_gen"]
        for scale in scales:
            ours = psym["results"]["tasks"][task]["scales"][scale]["score"]
            theirs = lm_scores.get(f"{scale},psym_parse")
            assert (theirs is None) if ours is None else abs(theirs - ours) <= 1e-6
        parse_rate = psym["results"]["tasks"][task]["parse_rate"]
        assert abs(lm_scores["parse_rate,psym_parse"] - parse_rate) <= 1e-6


def _from_file(sample: dict) -> dict:
    """A logged sample as saved by lm-eval's CLI, in the Python API's shape."""
    args = sample["arguments"]
    keys = sorted(args, key=lambda k: int(k.rsplit("_", 1)[1]))
    sample["arguments"] = [(args[k]["arg_0"], args[k]["arg_1"]) for k in keys]
    sample["filtered_resps"] = [
        (float(ll), greedy == "True") for ll, greedy in sample["filtered_resps"]
    ]
    return sample


@pytest.fixture(scope="module")
def gguf_cli_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The docs' command on the GGUF file, run once through ``psym lm-eval`` (the real ``psym``
    console script, which runs the real ``lm_eval`` on a fresh export of the installed
    instruments; no --include_path of ours), on the first 5 items of each instrument (items 1-5
    cover all five scales of both). lm_eval loading the GGUF file itself costs about 35 s of
    CPU, so one run serves the two tests of the command."""
    from psymetrics_plugin_hf.local_model import smollm2_location

    folder, gguf = smollm2_location()
    tmp = tmp_path_factory.mktemp("lm-eval-cli")
    out = tmp / "lm"
    cmd = [
        str(Path(sys.executable).with_name("psym")),
        "lm-eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={folder},gguf_file={gguf},dtype=float32",
        "--device",
        "cpu",
        "--batch_size",
        "8",
        "--tasks",
        "psym_bfi,psym_mfq",
        "--apply_chat_template",
        "--limit",
        "5",
        "--log_samples",
        "--output_path",
        str(out),
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TQDM_DISABLE": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
    return proc, out


def test_real_lm_eval_cli_with_gguf(smollm2, gguf_cli_run, tmp_path):
    """The documented command (real lm_eval, GGUF file, --apply_chat_template) matches
    ``psym eval`` on the first 5 items of each instrument."""
    proc, out = gguf_cli_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    for scale in BFI_SCALES + MFQ_SCALES:
        assert f"|{scale}" in proc.stdout.replace(" ", ""), proc.stdout
    (results_file,) = out.rglob("results_*.json")
    lm_res: dict[str, Any] = json.loads(results_file.read_text())
    lm_res["samples"] = {}
    for task in ("psym_bfi", "psym_mfq"):
        (sfile,) = out.rglob(f"samples_{task}_*.jsonl")
        lm_res["samples"][task] = [
            _from_file(json.loads(x)) for x in sfile.read_text().splitlines()
        ]
    psym = run_psym(smollm2, ["bfi", "mfq"], "logprob", 5, tmp_path / "psym", cache=True)
    report = assert_logprob_parity(smollm2, lm_res, psym, {"bfi": BFI_SCALES, "mfq": MFQ_SCALES})
    assert len(report) == 10


def test_psym_lm_eval_passes_through_with_our_tasks(gguf_cli_run):
    """`psym lm-eval ARGS` runs the real lm_eval with a fresh export on --include_path: the
    command above names no task folder, yet lm_eval found and ran psym_bfi and psym_mfq."""
    proc, out = gguf_cli_run
    assert proc.returncode == 0, proc.stderr[-2000:]
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]
    assert {"psym_bfi", "psym_mfq"} <= set(results)
    assert "psym-lm-eval-" in proc.stdout + proc.stderr  # the temporary export's folder
