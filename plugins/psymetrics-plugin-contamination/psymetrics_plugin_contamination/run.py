"""``contamination()``: the library call behind ``psym contamination``.

For each task: build the probe view of the instrument (texts shipped or ``--items``), its
keywords and every probe prompt; answer them through the cached backend (samples.jsonl gets one
line per probe prompt as answers arrive); score, bootstrap and combine into the index; write
``contamination.json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from psymetrics_core.backends.base import Reporter, parse_model_args
from psymetrics_core.errors import PsymError
from psymetrics_core.item_texts import require_item_texts
from psymetrics_core.registry import get_instrument
from psymetrics_core.results import SampleWriter, provenance, redact, write_results
from psymetrics_core.rundir import ensure_run_dir
from psymetrics_core.runner import instrument_record, make_backend

from .inventory import Inventory, build_inventory
from .keywords import keywords_for
from .options import PROBES, ProbeOptions
from .pipeline import answer_prompts, check_loglik
from .prompts import ProbePrompt, build_prompts
from .scoring import Answered, Record, score_prompt
from .summary import ProbeResult, contamination_index, summarise

__all__ = ["contamination", "prepare", "CITATION", "SCHEMA"]

SCHEMA = "psymetrics-contamination/1"
CITATION = (
    "Han, J., Song, W., Lee, J., & Jo, Y. (2025). Quantifying data contamination in "
    "psychometric evaluations of LLMs. arXiv:2510.07175. Order test after Oren, Y., Meister, "
    "N., Chatterji, N., Ladhak, F., & Hashimoto, T. B. (2023). Proving test set contamination "
    "in black box language models. arXiv:2310.17623."
)


def prepare(
    task: str,
    probes: Sequence[str],
    opts: ProbeOptions,
    item_files: Mapping[str, str | Path] | None = None,
    keyword_files: Mapping[str, str | Path] | None = None,
    permutations: int = 50,
    limit: int | None = None,
) -> tuple[Inventory, list[ProbePrompt], str | None, Any]:
    """The inventory, prompts, keyword source note and instrument of ``task``."""
    inst = require_item_texts(get_instrument(task), "original", item_files)
    inv = build_inventory(inst, opts)
    if limit is not None:  # the first items only; dimensions and names stay the instrument's
        inv = replace(inv, items=inv.items[:limit])
    kws, source = None, None
    if "keyword" in probes:
        texts = {it.id: it.stored for it in inv.items}
        kws, source = keywords_for(task, texts, (keyword_files or {}).get(task))
    prompts = build_prompts(inv, probes, opts, kws, permutations)
    return inv, prompts, source, inst


def _sample(a: Answered, rec: Record) -> dict[str, Any]:
    p = a.prompt
    return {
        "task": p.task,
        "probe": p.probe,
        "unit": p.unit,
        "condition": p.condition,
        "prompt": p.text,
        "continuation": p.continuation,
        "max_new_tokens": p.max_new_tokens if p.mode == "generate" else None,
        "completion": a.text,
        "loglik": a.loglik,
        "gold": p.gold,
        **rec.to_json(),
        **({"meta": p.meta} if p.meta else {}),
    }


def contamination(
    tasks: Sequence[str],
    *,
    probes: Sequence[str] = PROBES,
    model: str = "smollm2",
    model_args: str | dict[str, str] | None = None,
    permutations: int = 50,
    options: ProbeOptions | None = None,
    item_files: Mapping[str, str | Path] | None = None,
    keyword_files: Mapping[str, str | Path] | None = None,
    output: str | Path | None = None,
    limit: int | None = None,
    cache: bool = True,
    backend: Any = None,
    progress: Callable[[str, int], Reporter] | None = None,
    overwrite: bool = False,
    resume: bool = False,
) -> dict[str, Any]:
    """Run the probes on ``tasks`` and return (and write to ``output``) the report dict.

    ``output`` is claimed like ``psym eval``'s (``psymetrics_core.rundir.ensure_run_dir``):
    locked, and refused when it already holds a run unless ``overwrite`` or ``resume``.
    """
    opts = options or ProbeOptions()
    if not tasks:
        raise PsymError("no tasks given")
    if permutations < 1:
        raise PsymError("--permutations must be at least 1")
    if limit is not None and limit < 2:
        raise PsymError("--limit must be at least 2")
    claim = (
        ensure_run_dir(Path(output), overwrite=overwrite, resume=resume)
        if output is not None
        else nullcontext()
    )
    with claim:
        prepared = {
            t: prepare(t, probes, opts, item_files, keyword_files, permutations, limit)
            for t in tasks
        }
        args = model_args if isinstance(model_args, dict) else parse_model_args(model_args)
        be = backend if backend is not None else make_backend(model, args)
        cached = None
        if cache:
            from psymetrics_core.cache import CachedBackend, ResponseCache

            cached = CachedBackend(be, ResponseCache())
        use = cached if cached is not None else be
        if "order" in probes:
            check_loglik(use)
        out_dir = Path(output) if output is not None else None
        # the probes' own record shapes, not psym eval's run records (psymetrics_core.records)
        writer = SampleWriter(out_dir / "samples.jsonl" if out_dir else None, model=None)
        report: dict[str, Any] = {
            "schema": SCHEMA,
            "citation": CITATION,
            "model": model,
            "model_args": redact(args),
            "backend": be.identity(),
            "probes": list(probes),
            "permutations": permutations,
            "limit": limit,
            "options": opts.to_json(),
            **provenance(),
            "tasks": {},
        }
        try:
            for task, (inv, prompts, kw_source, inst) in prepared.items():
                reporter = progress(task, len(prompts)) if progress else None
                records: dict[str, list[Record]] = {p: [] for p in probes}

                def take(answers: list[Answered], _inv: Inventory = inv,
                         _records: dict[str, list[Record]] = records) -> None:  # fmt: skip
                    for a in answers:
                        rec = score_prompt(a, _inv, opts)
                        _records[a.prompt.probe].append(rec)
                        writer.write(_sample(a, rec))

                answer_prompts(use, prompts, opts.seed, take, reporter)
                results = [summarise(inv, p, records[p], opts) for p in probes]
                report["tasks"][task] = _task_entry(inv, inst, results, records, kw_source, opts)
        finally:
            writer.close()
            if cached is not None:
                report["cache"] = cached.summary()
                cached.cache.close()
        if hasattr(be, "usage"):
            report["usage"] = be.usage()
        if out_dir is not None:
            report_json = json.loads(json.dumps(report, default=str))
            write_results(out_dir / "contamination.json", report_json, validate=False)
        return report


def _task_entry(
    inv: Inventory,
    inst: Any,
    results: list[ProbeResult],
    records: dict[str, list[Record]],
    kw_source: str | None,
    opts: ProbeOptions,
) -> dict[str, Any]:
    return {
        "instrument": instrument_record(inst),
        "inventory_name": inv.name,
        "n_items": len(inv.items),
        "n_scored_items": len(inv.scored),
        "dimensions": list(inv.dimensions),
        "keywords": kw_source,
        "probes": {r.probe: r.to_json() for r in results},
        "index": contamination_index(inv, results, records, opts),
    }
