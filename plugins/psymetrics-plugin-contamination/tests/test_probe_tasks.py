"""The probes run as psymetrics ``probe`` tasks through ``psymetrics_core.evaluate``.

The generation probes' response-cache keys must be those of the plugin's earlier own pipeline,
so responses already paid for (e.g. a long SmolLM2 run) are found again. The pinned digests were
obtained by running the earlier code (psymetrics main at e71e0e8, before this migration) with
exactly the fake backend below: ``contamination(["bfi"], probes=FIVE, backend=Fake(), ...)``,
then reading every key of the response cache (``ResponseCache().rows()``), sorted, joined with
newlines and hashed with SHA-256; and the key of the first prompt (BFI item 1, verbatim, cued).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from psymetrics_plugin_contamination.options import ProbeOptions
from psymetrics_plugin_contamination.run import contamination
from psymetrics_plugin_contamination.tasks import ContaminationTask

from psymetrics_core.api import Backend, Completion, GenerationSettings, Prompt, session_or_default
from psymetrics_core.backends.cache import ResponseCache, request_key
from psymetrics_core.records import SampleRecord

FIVE = ("verbatim", "keyword", "item-dimension", "option-score", "target-score")
OLD_DIGEST = "4b7c472aa7d6fe7bf91b9fdd160de0a7f978a85ae5a9ccbfbeca611b2d8ea20c"
OLD_FIRST_KEY = "efe540095f28ea79409f99da4295896fd0b7c769024c667235b6c1526fd444e4"
FIRST_PROMPT = (
    "You are given metadata about a psychometric inventory item.\n"
    "Your task is to reproduce the exact full wording of that item.\n\nMetadata:\n\n"
    "- Inventory name: Big Five Inventory (BFI-44)\n"
    "- Item index: 1 (Note: indexing starts from 1)\n\nInstructions:\n\n"
    "- Output ONLY the exact item text, with no numbering, labels, or extra words.\n"
    "- Preserve the original wording, casing, and punctuation if you know it."
)
IDENT = {"backend": "fake-probe", "model": "pinned-1"}


class Fake(Backend):
    """Answers "x" to everything; scores every continuation -1 per character."""

    name = "fake-probe"
    supports_continuations = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def generate(self, prompts, settings, progress=None):
        self.calls += [(settings.mode, len(prompts))]
        if progress is not None:
            progress.advance(len(prompts))
        return [Completion(text="x") for _ in prompts]

    def option_logprobs(self, prompts, settings, progress=None):
        self.calls += [(settings.mode, len(prompts))]
        if progress is not None:
            progress.advance(len(prompts))
        return [
            Completion(option_logprobs=tuple(-float(len(o.scored_text)) for o in p.options))
            for p in prompts
        ]

    def identity(self):
        return dict(IDENT)


def test_generation_probe_keys_are_those_of_the_earlier_pipeline(tmp_path: Path) -> None:
    # the earlier defaults, given explicitly (the verbatim budget is now 512 tokens and the BFI
    # dimensions are listed in the paper's order): the answers paid for then are found again
    old = ProbeOptions(bootstrap=10, max_new_tokens_verbatim=64, dimension_labels="instrument")
    rep = contamination(
        ["bfi"],
        probes=FIVE,
        backend=Fake(),
        output=tmp_path / "run",
        options=old,
        session=session_or_default(),
    )
    keys = sorted(row[0] for row in ResponseCache().rows())
    assert len(keys) == rep["cache"]["misses"] == 347
    assert hashlib.sha256("\n".join(keys).encode()).hexdigest() == OLD_DIGEST
    # the same by hand for one prompt: one user message, no options, greedy, seed 1234
    first = Prompt(({"role": "user", "content": FIRST_PROMPT},), (), FIRST_PROMPT)
    key = request_key(IDENT, first, GenerationSettings("generate", 64, 0.0, 1234))
    assert key == OLD_FIRST_KEY and key in keys


def test_samples_are_core_records_that_keep_probe_unit_condition_and_gold(
    tmp_path: Path,
) -> None:
    be = Fake()
    rep = contamination(
        ["bfi"],
        probes=("verbatim", "target-score", "order"),
        backend=be,
        limit=3,
        permutations=4,
        output=tmp_path,
        options=ProbeOptions(bootstrap=10),
        session=session_or_default(),
    )
    lines = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    probes = rep["tasks"]["bfi"]["probes"]
    assert len(lines) == sum(pr["n_prompts"] for pr in probes.values()) == 3 * 2 + 3 * 3 + 4 * 5
    for line in lines:
        SampleRecord.model_validate(line)  # what `psym schema samples` describes
    meta = [(x["task"], x["item_meta"]["meta"]) for x in lines]
    first = meta[0]
    assert first[0] == "bfi.verbatim"
    assert {k: first[1][k] for k in ("probe", "unit", "condition", "instrument")} == {
        "probe": "verbatim",
        "unit": "1",
        "condition": "cued",
        "instrument": "bfi",
    }
    assert first[1]["gold"] == "I see myself as someone who is talkative."
    target = next(x for x in lines if x["task"] == "bfi.target-score")
    assert target["item_meta"]["meta"]["condition"] == "min"
    assert target["parse_status"] == "unparsed" and target["data"]["status"] == "invalid"
    order = [x for x in lines if x["task"] == "bfi.order"]
    canon = next(x for x in order if x["item"] == "bfi/canonical")
    cont = canon["prompt"]["options"][0]["continuation"]
    # the fake scores -len(continuation): the record, the data and the result agree
    assert canon["option_logprobs"] == {"sequence": -float(len(cont))}
    assert canon["data"]["loglik"] == -float(len(cont))
    assert probes["order"]["detail"]["canonical_loglik"] == -float(len(cont))
    # the core's results.json is there too, one entry per (instrument, probe)
    res = json.loads((tmp_path / "results.json").read_text())
    assert set(res["tasks"]) == {"bfi.verbatim", "bfi.target-score", "bfi.order"}
    assert res["tasks"]["bfi.order"]["settings"]["mode"] == "logprob"
    assert res["tasks"]["bfi.verbatim"]["settings"]["max_new_tokens"] == 512
    assert (
        res["tasks"]["bfi.target-score"]["contamination"]["value"]
        == (probes["target-score"]["value"])
    )
    # every generation with its probe's length; the order test by log-likelihood
    assert {m for m, _ in be.calls} == {"generate", "logprob"}


def test_each_probe_is_a_probe_task_with_its_target(tmp_path: Path) -> None:
    from psymetrics_plugin_contamination.run import prepare
    from psymetrics_plugin_contamination.tasks import ProbeSet, probe_tasks

    from psymetrics_core.api import Session

    opts = ProbeOptions()
    inv, prompts, _, inst = prepare("sr2k", list(FIVE), opts, limit=3, session=Session())
    tasks = probe_tasks(inst, list(FIVE), prompts, ProbeSet(inv, opts))
    # sr2k has one dimension: no item-dimension prompts, no task (summarised without calls)
    assert [t.probe for t in tasks] == ["verbatim", "keyword", "option-score", "target-score"]
    for t in tasks:
        assert isinstance(t, ContaminationTask) and t.kind == "probe"
        assert t.target is inst and t.mode == "generate"
        assert t.extra["max_new_tokens"] == opts.max_new_tokens(t.probe)
        items = t.load_items()
        assert len(items) == len(t.prompts)
        pr = t.render(items[0])
        assert pr.messages == ({"role": "user", "content": t.prompts[0].text},)
        assert pr.options == ()


def test_the_order_probe_on_a_backend_without_continuations_stops_first(tmp_path: Path) -> None:
    class NoContinuations(Fake):
        supports_continuations = False

    be = NoContinuations()
    with pytest.raises(Exception, match="cannot score a continuation's log-likelihood"):
        contamination(
            ["bfi"],
            probes=("verbatim", "order"),
            backend=be,
            output=tmp_path,
            session=session_or_default(),
        )
    assert be.calls == []
