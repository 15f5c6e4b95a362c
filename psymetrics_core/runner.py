"""The evaluation pipeline behind ``psym eval``: items -> prompts -> model -> answers -> scores."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .backends.base import GenerationSettings, Reporter, parse_model_args
from .errors import BackendError, PsymError
from .item_texts import require_item_texts
from .plugins import get_plugin_manager
from .registry import backends, get_instrument
from .results import SampleWriter, provenance, redact, write_results
from .types import Answer, Instrument, Item, Prompt

__all__ = ["evaluate", "make_backend", "instrument_record"]

MODES = ("generate", "logprob")
CHUNK = 8  # prompts per backend call; samples are flushed after each chunk


def make_backend(model: str, model_args: str | dict[str, str] | None = None) -> Any:
    """Build the backend registered as ``model`` with lm-eval style ``model_args``."""
    args = model_args if isinstance(model_args, dict) else parse_model_args(model_args)
    entries = backends()
    if model not in entries:
        raise BackendError(
            f"unknown model backend '{model}' (available: {', '.join(sorted(entries))})"
        )
    return entries[model].factory(args)


def instrument_record(inst: Instrument) -> dict[str, Any]:
    """Citation, licence, source, scoring rule and plugin of an instrument, for results."""
    plugin = inst.plugin
    return {
        "id": inst.id,
        "name": inst.name,
        "version": inst.version,
        "citation": inst.citation,
        "license_status": inst.license_status,
        "item_source": inst.item_source,
        "scoring_rule": inst.scoring_rule,
        "item_texts": "shipped" if inst.texts_shipped else "user-supplied",
        "plugin": plugin.name if plugin else None,
        "distribution": plugin.distribution if plugin else None,
        "plugin_version": plugin.version if plugin else None,
    }


def evaluate(
    tasks: Sequence[str],
    *,
    model: str = "smollm2",
    model_args: str | dict[str, str] | None = None,
    mode: str = "generate",
    seed: int = 1234,
    limit: int | None = None,
    form: str = "original",
    max_new_tokens: int = 24,
    temperature: float = 0.0,
    output: str | Path | None = None,
    item_files: Mapping[str, str | Path] | None = None,
    progress: Callable[[str, int], Reporter] | None = None,
    backend: Any = None,
) -> dict[str, Any]:
    """Administer ``tasks`` to a model and return the results dict (also written to ``output``).

    ``progress(task, n_prompts)`` may return a reporter that is advanced as prompts finish.
    ``backend`` overrides ``model``/``model_args`` with a ready backend object.
    ``item_files`` maps ``task`` (or ``task:form``) to a CSV of item texts (``id,text``) for
    instruments that do not ship their texts.
    """
    if mode not in MODES:
        raise PsymError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    if limit is not None and limit < 1:
        raise PsymError("--limit must be at least 1")
    instruments = [require_item_texts(get_instrument(t), form, item_files) for t in tasks]
    if not instruments:
        raise PsymError("no tasks given")
    settings = GenerationSettings(mode, max_new_tokens, temperature, seed)
    be = backend if backend is not None else make_backend(model, model_args)
    out_dir = Path(output) if output is not None else None
    writer = SampleWriter(out_dir / "samples.jsonl" if out_dir else None)
    args = model_args if isinstance(model_args, dict) else parse_model_args(model_args)
    results: dict[str, Any] = {
        "model": model,
        "model_args": redact(args),
        "backend": be.identity(),
        "settings": settings.to_json(),
        "seed": seed,
        "limit": limit,
        "form": form,
        **provenance(),
        "tasks": {},
    }
    try:
        for inst in instruments:
            reporter = progress(inst.id, _count(inst, form, limit)) if progress else None
            results["tasks"][inst.id] = _run_task(inst, be, settings, form, limit, writer, reporter)
    finally:
        writer.close()
    if out_dir is not None:
        write_results(out_dir / "results.json", results)
    return results


def _count(inst: Instrument, form: str, limit: int | None) -> int:
    n = len(inst.forms.get(form, inst.items))
    return min(n, limit) if limit else n


def _run_task(
    inst: Instrument,
    be: Any,
    settings: GenerationSettings,
    form: str,
    limit: int | None,
    writer: SampleWriter,
    reporter: Reporter | None,
) -> dict[str, Any]:
    hook = get_plugin_manager().hook
    items: list[Item] = hook.load_items(instrument=inst, form=form)
    if limit is not None:
        items = items[:limit]
    prompts: list[Prompt] = [hook.render_prompt(instrument=inst, item=it) for it in items]
    answers: list[tuple[Item, Answer]] = []
    call = be.option_logprobs if settings.mode == "logprob" else be.generate
    for start in range(0, len(items), CHUNK):
        chunk_items = items[start : start + CHUNK]
        chunk_prompts = prompts[start : start + CHUNK]
        completions = call(chunk_prompts, settings, reporter)
        for it, pr, comp in zip(chunk_items, chunk_prompts, completions, strict=True):
            ans: Answer = hook.parse_response(instrument=inst, item=it, prompt=pr, completion=comp)
            answers.append((it, ans))
            writer.write(
                {
                    "task": inst.id,
                    "form": form,
                    "item": it.id,
                    "prompt": pr.to_json(),
                    "rendered_prompt": pr.text,
                    "completion": comp.text,
                    "option_logprobs": (
                        dict(zip([o.value for o in pr.options], comp.option_logprobs, strict=True))
                        if comp.option_logprobs is not None
                        else None
                    ),
                    "answer": ans.value,
                    "parse_status": ans.status,
                    "option_probs": ans.probabilities,
                }
            )
    responses = {it.id: a.value for it, a in answers}
    scores = hook.score(
        instrument=inst, responses=responses, form=form, answers={it.id: a for it, a in answers}
    )
    entry: dict[str, Any] = hook.aggregate(instrument=inst, scores=scores, answers=answers)
    entry["instrument"] = instrument_record(inst)
    entry["prompt_template"] = inst.prompt_template
    return entry
