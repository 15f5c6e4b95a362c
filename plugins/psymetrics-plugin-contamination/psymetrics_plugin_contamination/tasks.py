"""The probes as psymetrics ``probe`` tasks: one ``ContaminationTask`` per (instrument, probe).

Each task's ``target`` is the probed instrument; its items are the probe prompts
(``prompts.build_prompts``); ``render`` gives the exact prompt (one user message, no system
prompt; an order-test prompt carries one option whose ``continuation`` is the item list whose
log-likelihood is scored); ``parse`` is pure; ``score`` summarises the probe (metric, interval,
counts, baselines) into ``TaskScores`` and hands the result to the instrument's shared
``ProbeSet``, from which ``contamination.json`` and the index are built. The core pipeline
(``psymetrics_core.evaluate``) does every model call: response cache, resume, samples.jsonl,
progress and results.json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from psymetrics_core.api import (
    Completion,
    Generation,
    Instrument,
    Item,
    Option,
    PluginInfo,
    ProbeTask,
    Prompt,
    Score,
    TaskResults,
    TaskScores,
)

from .inventory import Inventory
from .options import ProbeOptions
from .prompts import ProbePrompt
from .scoring import Answered, Record, score_prompt, truncated
from .summary import METRIC, ProbeResult, summarise

__all__ = ["ContaminationTask", "ProbeSet", "core_prompt", "probe_tasks", "CITATION"]

CITATION = (
    "Han, J., Song, W., Lee, J., & Jo, Y. (2025). Quantifying data contamination in "
    "psychometric evaluations of LLMs. arXiv:2510.07175. Order test after Oren, Y., Meister, "
    "N., Chatterji, N., Ladhak, F., & Hashimoto, T. B. (2023). Proving test set contamination "
    "in black box language models. arXiv:2310.17623."
)
DISTRIBUTION = "psymetrics-plugin-contamination"
# the order test's one option: its label is never shown; its continuation is what is scored
SEQUENCE_LABEL = "sequence"


def _plugin() -> PluginInfo:
    try:
        ver: str | None = version(DISTRIBUTION)
    except PackageNotFoundError:
        ver = None
    return PluginInfo("contamination", DISTRIBUTION, ver)


def core_prompt(p: ProbePrompt) -> Prompt:
    """The core ``Prompt`` of a probe prompt: one user message, no system prompt (plus, for a
    log-likelihood request, one option whose ``continuation`` is scored)."""
    options = (
        (Option(0, SEQUENCE_LABEL, p.continuation),)
        if p.mode == "loglik" and p.continuation is not None
        else ()
    )
    return Prompt(messages=({"role": "user", "content": p.text},), options=options, text=p.text)


def item_id(p: ProbePrompt) -> str:
    """The prompt's item id within its task: the unit, and the condition when there is one."""
    return f"{p.unit}/{p.condition}" if p.condition else p.unit


@dataclass
class ProbeSet:
    """What the probe tasks of one instrument share: its probe view and options, and (filled by
    each task's ``score``) every probe's result and per-prompt records for the joint index."""

    inventory: Inventory
    options: ProbeOptions
    results: dict[str, ProbeResult] = field(default_factory=dict)
    records: dict[str, list[Record]] = field(default_factory=dict)

    def finish(self, probe: str, records: list[Record]) -> ProbeResult:
        """Summarise ``probe``'s records (metric, interval, counts, baselines) and keep both."""
        result = summarise(self.inventory, probe, records, self.options)
        self.records[probe] = records
        self.results[probe] = result
        return result


@dataclass
class ContaminationTask(ProbeTask):
    """One probe of one instrument (``target``) as a psymetrics ``probe`` task."""

    probe: str = ""
    prompts: tuple[ProbePrompt, ...] = ()
    shared: ProbeSet | None = field(default=None, repr=False)

    def _by_id(self) -> dict[str, ProbePrompt]:
        """Probe prompts by item id, built once per task (render/parse/score look items up)."""
        found: dict[str, ProbePrompt] | None = self.__dict__.get("_prompts_by_id")
        if found is None:
            found = self.__dict__["_prompts_by_id"] = {item_id(p): p for p in self.prompts}
        return found

    def load_items(self) -> list[Item]:
        """One item per probe prompt; its ``meta`` says probe, unit, condition and gold."""
        out = []
        for p in self.prompts:
            meta: dict[str, Any] = {
                "instrument": p.task,
                "probe": p.probe,
                "unit": p.unit,
                "condition": p.condition,
                "gold": p.gold,
                **({"max_new_tokens": p.max_new_tokens} if p.mode == "generate" else {}),
                **p.meta,
            }
            out.append(Item(item_id(p), p.text, (), meta=meta))
        return out

    def render(self, item: Item, cell: Any = None) -> Prompt:
        """The probe prompt exactly as Han et al.'s template renders it (no cell transforms:
        the probes take no conditions)."""
        return core_prompt(self._by_id()[item.id])

    def parse(self, item: Item, completion: Completion) -> Generation:
        """The prompt's record (pure): parsed answer, status and what it adds to the metric."""
        p = self._by_id()[item.id]
        cut = truncated(completion.meta) if p.mode == "generate" else None
        rec = self._record(p, completion.text, completion.option_logprobs, cut)
        status = rec.status if rec.status in ("ok", "refused") else "unparsed"
        data = {**rec.to_json(), "gold": p.gold}
        if p.mode == "loglik":
            data["loglik"] = rec.parsed
        return Generation(
            item, completion.text or "", status, data, option_logprobs=completion.option_logprobs
        )

    def score(self, results: TaskResults) -> TaskScores:
        """The probe's metric with its interval; the whole probe result as detail."""
        by_id = self._by_id()
        records = [
            self._record(by_id[g.item.id], g.text, g.option_logprobs, g.data["truncated"])
            for g in results.generations
        ]
        res = self._shared().finish(self.probe, records)
        return TaskScores.of([probe_score(res)], contamination=_jsonable(res.to_json()))

    def _record(
        self,
        p: ProbePrompt,
        text: str | None,
        logprobs: tuple[float, ...] | None,
        cut: bool | None = None,
    ) -> Record:
        if p.mode == "loglik":
            answered = Answered(p, loglik=logprobs[0] if logprobs else None)
        else:
            answered = Answered(p, text=text, truncated=cut)
        shared = self._shared()
        return score_prompt(answered, shared.inventory, shared.options)

    def _shared(self) -> ProbeSet:
        if self.shared is None:
            raise ValueError(f"task '{self.id}' was built without its ProbeSet")
        return self.shared


def probe_score(res: ProbeResult) -> Score:
    """The probe's headline metric as a core ``Score`` (null with a reason when undefined)."""
    return Score(
        res.metric,
        res.value,
        reason=res.reason or (None if res.value is not None else "undefined"),
        kind=res.metric,
        n=res.n_prompts,
        ci_low=res.ci_low,
        ci_high=res.ci_high,
        detail={"direction": res.direction},
    )


def _jsonable(value: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(value, default=str))
    return out


def probe_tasks(
    inst: Instrument, probes: list[str], prompts: list[ProbePrompt], shared: ProbeSet
) -> list[ContaminationTask]:
    """One task per probe that has prompts (an instrument with one dimension has no
    item-dimension prompts; its result is summarised without a model call)."""
    inv = shared.inventory
    out = []
    for probe in probes:
        mine = tuple(p for p in prompts if p.probe == probe)
        if not mine:
            continue
        metric, direction = METRIC[probe]
        generate = probe != "order"
        out.append(
            ContaminationTask.define(
                id=f"{inv.task}.{probe}",
                name=f"{inv.name}: {probe} probe",
                version=inst.version,
                citation=CITATION,
                license_status=inst.license_status,
                item_source=f"probe prompts built from the items of '{inst.id}'",
                scoring_rule=f"{metric} ({direction})",
                scales={metric: direction},
                max_new_tokens=shared.options.max_new_tokens(probe) if generate else 1,
                plugin=_plugin(),
                target=inst,
                mode="generate" if generate else "logprob",
                probe=probe,
                prompts=mine,
                shared=shared,
            )
        )
    return out
