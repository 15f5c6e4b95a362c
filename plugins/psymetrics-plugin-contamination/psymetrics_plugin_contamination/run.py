"""``contamination()``: the library call behind ``psym contamination``.

For each task: build the probe view of the instrument (texts shipped or ``--items``), its
keywords and every probe prompt; turn each probe into a psymetrics ``probe`` task
(``tasks.ContaminationTask``) and run them all with ``psymetrics_core.evaluate`` (response
cache, resume, samples.jsonl with one line per probe prompt, progress, results.json); then
combine the probes' results into the index and write ``contamination.json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from psymetrics_core import evaluate
from psymetrics_core.api import (
    DEFAULT_MODEL,
    BackendError,
    PsymError,
    Reporter,
    Session,
    as_backend,
    bound,
    claim_run_dir,
    instrument_record,
    parse_model_args,
    plugin_versions,
    provenance,
    redact,
    require_item_texts,
    write_results,
)

from .inventory import Inventory, build_inventory
from .keywords import keywords_for
from .options import PROBES, ProbeOptions
from .prompts import ProbePrompt, build_prompts
from .summary import ProbeResult, contamination_index
from .tasks import CITATION, ContaminationTask, ProbeSet, probe_tasks

__all__ = ["contamination", "prepare", "CITATION", "SCHEMA"]

SCHEMA = "psymetrics-contamination/1"


def prepare(
    task: str,
    probes: Sequence[str],
    opts: ProbeOptions,
    item_files: Mapping[str, str | Path] | None = None,
    keyword_files: Mapping[str, str | Path] | None = None,
    permutations: int = 50,
    limit: int | None = None,
    *,
    session: Session,
) -> tuple[Inventory, list[ProbePrompt], str | None, Any]:
    """The inventory, prompts, keyword source note and instrument of ``task`` (a task of
    ``session``)."""
    inst = require_item_texts(session.get_instrument(task), "original", item_files)
    inv = build_inventory(inst, opts)
    if limit is not None:  # the first items only; dimensions and names stay the instrument's
        inv = replace(inv, items=inv.items[:limit])
    kws, source = None, None
    if "keyword" in probes:
        texts = {it.id: it.stored for it in inv.items}
        kws, source = keywords_for(task, texts, (keyword_files or {}).get(task))
    prompts = build_prompts(inv, probes, opts, kws, permutations)
    return inv, prompts, source, inst


def contamination(
    tasks: Sequence[str],
    *,
    probes: Sequence[str] = PROBES,
    model: str = DEFAULT_MODEL,
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
    session: Session,
) -> dict[str, Any]:
    """Run the probes on ``tasks`` and return (and write to ``output``) the report dict.

    ``session`` supplies the plugins (``psym contamination`` passes its own; a library caller
    passes ``psymetrics_core.api.session_or_default()``).

    ``output`` is claimed like ``psym eval``'s (``psymetrics_core.records.rundir.claim_run_dir``,
    the claim handed to ``evaluate``):
    locked, and refused when it already holds a run unless ``overwrite`` or ``resume``.
    """
    opts = options or ProbeOptions()
    if not tasks:
        raise PsymError("no tasks given")
    bound("--permutations").check(permutations)
    if limit is not None:
        bound("contamination --limit").check(limit, "--limit")
    claim = (
        claim_run_dir(Path(output), overwrite=overwrite, resume=resume)
        if output is not None
        else nullcontext()
    )
    with claim as run_dir:
        prepared = {
            t: prepare(
                t, probes, opts, item_files, keyword_files, permutations, limit, session=session
            )
            for t in tasks
        }
        args = model_args if isinstance(model_args, dict) else parse_model_args(model_args)
        be = as_backend(backend if backend is not None else session.make_backend(model, args))
        if "order" in probes and not be.supports_continuations:
            raise BackendError(f"{be.continuation_refusal()}; or leave 'order' out of --probes")
        sets: dict[str, ProbeSet] = {}
        run_tasks: list[ContaminationTask] = []
        for task, (inv, prompts, _source, inst) in prepared.items():
            sets[task] = ProbeSet(inv, opts)
            run_tasks += probe_tasks(inst, list(probes), prompts, sets[task])
        results: dict[str, Any] = {}
        if run_tasks:  # every model call goes through the core pipeline
            results = evaluate(
                run_tasks,
                model=model,
                model_args=args,
                backend=be,
                seed=opts.seed,
                output=output,
                cache=cache,
                progress=progress,
                session=session,
                run_dir=run_dir,
            )
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
            **provenance(plugin_versions(session.records)),
            "tasks": {},
        }
        for task, (inv, _prompts, kw_source, inst) in prepared.items():
            shared = sets[task]
            for p in probes:  # probes without prompts (one dimension) are summarised empty
                if p not in shared.results:
                    shared.finish(p, [])
            ordered = [shared.results[p] for p in probes]
            report["tasks"][task] = _task_entry(inv, inst, ordered, shared, kw_source)
        if results.get("cache") is not None:
            report["cache"] = results["cache"]
        if results.get("usage") is not None:
            report["usage"] = results["usage"]
        if output is not None:
            report_json = json.loads(json.dumps(report, default=str))
            write_results(Path(output) / "contamination.json", report_json, validate=False)
        return report


def _task_entry(
    inv: Inventory,
    inst: Any,
    results: list[ProbeResult],
    shared: ProbeSet,
    kw_source: str | None,
) -> dict[str, Any]:
    return {
        "instrument": instrument_record(inst),
        "inventory_name": inv.name,
        "n_items": len(inv.items),
        "n_scored_items": len(inv.scored),
        "dimensions": list(inv.dimensions),
        "dimension_labels": inv.labels_source,
        "keywords": kw_source,
        "probes": {r.probe: r.to_json() for r in results},
        "index": contamination_index(inv, results, shared.records, shared.options),
    }
