"""The evaluation pipeline behind ``psym eval``: items -> prompts -> model -> answers -> scores."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .backends.base import GenerationSettings, Reporter, parse_model_args
from .behaviour import DEFAULT_MAX_NEW_TOKENS, with_options
from .conditions import Cell, Condition, cells_for
from .errors import BackendError, PsymError
from .item_texts import check_item_files, require_item_texts
from .judge import DEFAULT_JUDGE_MAX_NEW_TOKENS, Judge, judge_scope
from .norms import check_norm_groups, resolve_norm_group
from .plugins import get_plugin_manager
from .preflight import check_generation_options, check_parser, check_task_options
from .registry import backends, get_instrument
from .results import SampleWriter, provenance, redact, write_results
from .spec_scoring import centred_scales, keyed_values, mrat_term
from .types import Answer, Completion, Instrument, Item, Prompt

__all__ = ["evaluate", "make_backend", "instrument_record", "set_concurrency", "call_backend"]

MODES = ("generate", "logprob")
CHUNK = 8  # prompts per backend call; samples are flushed after each chunk


def make_backend(model: str, model_args: str | dict[str, str] | None = None) -> Any:
    """Build the backend registered as ``model`` with lm-eval style ``model_args``."""
    args = model_args if isinstance(model_args, dict) else parse_model_args(model_args)
    entries = backends()
    base, sep, variant = model.partition(":")
    if model not in entries and sep and base in entries:  # e.g. lm-eval:hf
        return entries[base].factory({**args, "variant": variant})
    if model not in entries:
        raise BackendError(
            f"unknown model backend '{model}' (available: {', '.join(sorted(entries))})"
        )
    return entries[model].factory(args)


def set_concurrency(be: Any, n: int) -> None:
    """Bound the requests ``be`` keeps in flight (ignored by backends that run one at a time)."""
    if n < 1:
        raise PsymError("--concurrency must be at least 1")
    if hasattr(be, "concurrency"):
        be.concurrency = n


def call_backend(
    be: Any,
    prompts: Sequence[Prompt],
    settings: GenerationSettings,
    reporter: Reporter | None = None,
) -> list[Completion]:
    """Every model call of a run goes through here: evaluated model and judge alike."""
    call = be.option_logprobs if settings.mode == "logprob" else be.generate
    return list(call(prompts, settings, reporter))


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
    max_new_tokens: int | None = None,
    temperature: float = 0.0,
    output: str | Path | None = None,
    item_files: Mapping[str, str | Path] | None = None,
    progress: Callable[[str, int], Reporter] | None = None,
    backend: Any = None,
    conditions: Sequence[str] = (),
    repeats: int = 1,
    design: str = "grid",
    norm_group: Mapping[str, str] | str | None = None,
    cache: bool | None = None,
    concurrency: int | None = None,
    task_options: Mapping[str, Mapping[str, Any]] | None = None,
    judge_model: str | None = None,
    judge_model_args: str | dict[str, str] | None = None,
    judge_max_new_tokens: int | None = None,
    units: Collection[tuple[str, str, int]] | None = None,
) -> dict[str, Any]:
    """Administer ``tasks`` to a model and return the results dict (also written to ``output``).

    ``progress(task, n_prompts)`` may return a reporter that is advanced as prompts finish.
    ``backend`` overrides ``model``/``model_args`` with a ready backend object.
    ``item_files`` maps ``task`` (or ``task:form``) to a CSV of item texts (``id,text``) for
    instruments that do not ship their texts.
    ``conditions`` are ``--condition`` values expanded into cells by ``design`` (see
    ``conditions.build_cells``); every cell is run ``repeats`` times with seeds ``seed + r``.
    ``tasks.<task>`` holds the first (cell, repeat) run; ``tasks.<task>.runs`` all of them.
    ``cache`` stores every response in the response cache before use (default: on for backends
    built by name, off for a ready ``backend`` object). ``concurrency`` bounds the requests in
    flight for backends that run them concurrently (API backends).
    ``norm_group`` picks the human norm group for z-scores: a name for every task, or
    {task: name} ({"*": name} for the rest); by default each instrument's first group.
    ``max_new_tokens`` defaults to 24 for questionnaires and to a behaviour task's own length.
    ``task_options`` maps task id (or ``"*"`` for every task that accepts the key) to options
    the task's hooks read as ``instrument.options``. ``judge_model`` (default: the evaluated
    model) answers tasks that ask ``psymetrics_core.judge.current_judge()``; its calls share
    the run's response cache. ``units`` restricts the run to these (task, cell name, repeat)
    units of work (one shard of a plan, see ``psymetrics_core.plan``); tasks with none are left
    out of the results.
    """
    if mode not in MODES:
        raise PsymError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    if limit is not None and limit < 1:
        raise PsymError("--limit must be at least 1")
    if repeats < 1:
        raise PsymError("--repeats must be at least 1")
    if not tasks:
        raise PsymError("no tasks given")
    check_generation_options(temperature, max_new_tokens, judge_max_new_tokens)
    check_item_files(tasks, item_files)
    check_task_options(tasks, task_options)
    cells = cells_for(list(conditions), design)
    opts = task_options or {}
    instruments = [
        with_options(require_item_texts(get_instrument(t), form, item_files), opts.get(t),
                     opts.get("*"))
        for t in tasks
    ]  # fmt: skip
    groups = {"*": norm_group} if isinstance(norm_group, str) else dict(norm_group or {})
    check_norm_groups(instruments, groups)
    for inst in instruments:
        check_parser(inst)
    settings = GenerationSettings(mode, max_new_tokens or DEFAULT_MAX_NEW_TOKENS, temperature, seed)
    be = backend if backend is not None else make_backend(model, model_args)
    if concurrency is not None:
        set_concurrency(be, concurrency)
    cached = _with_cache(be, backend is None if cache is None else cache)
    use = be if cached is None else cached  # what the tasks call
    out_dir = Path(output) if output is not None else None
    writer = SampleWriter(out_dir / "samples.jsonl" if out_dir else None)
    args = model_args if isinstance(model_args, dict) else parse_model_args(model_args)
    judge = _judge(model, args, judge_model, judge_model_args, use, cached, seed, out_dir)
    if judge_max_new_tokens:
        judge.settings = replace(judge.settings, max_new_tokens=judge_max_new_tokens)
    results: dict[str, Any] = {
        "model": model,
        "model_args": redact(args),
        "backend": be.identity(),
        "cache": None,
        "settings": settings.to_json(),
        "seed": seed,
        "limit": limit,
        "form": form,
        "conditions": [c.name for c in cells],
        "design": design,
        "repeats": repeats,
        "seeds": [seed + r for r in range(repeats)],
        **provenance(),
        "tasks": {},
    }
    try:
        with judge_scope(judge):
            for inst in instruments:
                todo = [
                    (cell, r)
                    for cell in cells
                    for r in range(repeats)
                    if units is None or (inst.id, cell.name, r) in units
                ]
                if not todo:
                    continue
                n = _count(inst, form, limit) * len(todo)
                reporter = progress(inst.id, n) if progress else None
                group = resolve_norm_group(inst, groups)
                task_settings = settings
                if max_new_tokens is None and "max_new_tokens" in inst.extra:
                    task_settings = replace(settings, max_new_tokens=inst.extra["max_new_tokens"])
                runs = [
                    _run_task(
                        inst, use, replace(task_settings, seed=seed + r), form, limit, writer,
                        reporter, cell=cell.bind(seed + r), repeat=r, norm_group=group,
                    )
                    for cell, r in todo
                ]  # fmt: skip
                results["tasks"][inst.id] = {**runs[0], "runs": [_run_summary(e) for e in runs]}
    finally:
        writer.close()
        if judge.n_calls:
            results["judge"] = judge.record()
        if cached is not None:
            results["cache"] = cached.summary()
            cached.cache.close()
    if hasattr(be, "usage"):
        results["usage"] = be.usage()
    if out_dir is not None:
        write_results(out_dir / "results.json", results)
    return results


def _judge(
    model: str,
    args: dict[str, str],
    judge_model: str | None,
    judge_model_args: str | dict[str, str] | None,
    use: Any,
    cached: Any,
    seed: int,
    out_dir: Path | None,
) -> Judge:
    """The run's judge: the evaluated model's own (cached) backend unless another is named.

    A separately named judge is built on first use and shares the run's response cache (none
    when the run has none).
    """
    jargs = (
        judge_model_args
        if isinstance(judge_model_args, dict)
        else parse_model_args(judge_model_args)
    )
    same = judge_model is None or (judge_model == model and (not jargs or jargs == args))

    def wrap(b: Any) -> Any:
        from .cache import CachedBackend

        return CachedBackend(b, cached.cache)

    return Judge(
        model=model if same else str(judge_model),
        model_args=args if same else jargs,
        backend=use if same else None,
        wrap=None if same or cached is None else wrap,
        seed=seed,
        max_new_tokens=DEFAULT_JUDGE_MAX_NEW_TOKENS,
        records=out_dir / "judge.jsonl" if out_dir else None,
        same_as_evaluated=same,
    )


def _with_cache(be: Any, enabled: bool) -> Any:
    from .cache import CachedBackend, ResponseCache

    return CachedBackend(be, ResponseCache()) if enabled else None


def _count(inst: Instrument, form: str, limit: int | None) -> int:
    if inst.kind == "behaviour":  # prompts may come from the task's options (data files)
        n = len(get_plugin_manager().hook.load_items(instrument=inst, form=form))
    else:
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
    cell: Cell | None = None,
    repeat: int = 0,
    norm_group: str | None = None,
) -> dict[str, Any]:
    hook = get_plugin_manager().hook
    cell = cell if cell is not None else Cell((Condition("original"),), settings.seed)
    form = cell.form(form)
    items: list[Item] = hook.load_items(instrument=inst, form=form)
    if limit is not None:
        items = items[:limit]
    items = cell.apply_items(inst, items, cell.seed)
    tag = {**cell.record(), "repeat": repeat, "seed": settings.seed}
    answers: list[tuple[Item, Answer]] = []
    if cell.battery:
        from .conditions.battery import administer_battery

        given = administer_battery(inst, items, be, settings, cell, reporter)
        for it, b_ans, pr, text, extra in given:
            answers.append((it, b_ans))
            writer.write(_sample(inst, form, it, pr, text, None, b_ans, {**tag, **extra}))
        items = []
    prompts: list[Prompt] = [
        hook.render_prompt(instrument=inst, item=it, condition=cell) for it in items
    ]
    size = int(getattr(be, "chunk_size", CHUNK))  # concurrent backends take bigger chunks
    for start in range(0, len(items), size):
        chunk_items = items[start : start + size]
        chunk_prompts = prompts[start : start + size]
        completions = call_backend(be, chunk_prompts, settings, reporter)
        for it, pr, comp in zip(chunk_items, chunk_prompts, completions, strict=True):
            ans: Answer = hook.parse_response(instrument=inst, item=it, prompt=pr, completion=comp)
            answers.append((it, ans))
            writer.write(_sample(inst, form, it, pr, comp.text, comp.option_logprobs, ans, tag))
    responses = {it.id: a.value for it, a in answers}
    scores = hook.score(
        instrument=inst, responses=responses, form=form, answers={it.id: a for it, a in answers}
    )
    entry: dict[str, Any] = hook.aggregate(
        instrument=inst, scores=scores, answers=answers, norm_group=norm_group
    )
    entry["instrument"] = instrument_record(inst)
    entry["prompt_template"] = inst.prompt_template
    entry.update(condition=cell.name, facets=cell.facets, repeat=repeat, seed=settings.seed)
    entry["form"] = form
    if inst.kind != "questionnaire":
        entry.update(kind=inst.kind, settings=settings.to_json(), options=dict(inst.options))
    return entry


def _sample(
    inst: Instrument,
    form: str,
    it: Item,
    pr: Prompt,
    text: str | None,
    logprobs: tuple[float, ...] | None,
    ans: Answer,
    tag: dict[str, Any],
) -> dict[str, Any]:
    """One samples.jsonl line: the item, prompt, completion, answer and the condition tag."""
    rs = inst.response_scales.get(it.response_scale)  # behaviour tasks have none
    scales = _scales_of(inst, form, it)
    keys: dict[str, Any] = {}
    if inst.kind == "questionnaire":  # keyed as scored (spec_scoring), MRAT centring excluded
        keys = {
            "keyed": keyed_values(inst, form, it, ans.value),
            "mrat_term": mrat_term(inst, it, ans.value),
        }
    return {
        "task": inst.id,
        "form": form,
        "item": it.id,
        "prompt": pr.to_json(),
        "rendered_prompt": pr.text,
        "completion": text,
        "option_logprobs": (
            dict(zip([o.value for o in pr.options], logprobs, strict=True))
            if logprobs is not None
            else None
        ),
        "answer": ans.value,
        "parse_status": ans.status,
        "option_probs": ans.probabilities,
        **({"data": ans.data} if ans.data is not None else {}),
        **keys,
        **tag,
        "item_meta": {
            "scales": scales,
            "reverse": it.reverse,
            "scored": it.scored,
            "min": rs.min if rs else None,
            "max": rs.max if rs else None,
            "rescale": [list(p) for p in it.rescale] if it.rescale else None,
            "centred": [s for s in centred_scales(inst) if it.scored and s in scales],
        },
    }


def _scales_of(inst: Instrument, form: str, it: Item) -> list[str]:
    """Every scale whose score uses ``it`` (totals and unions of scales included)."""
    out = []
    for name in inst.scales:
        try:
            if any(x.id == it.id for x in inst.scale_items(name, form)):
                out.append(name)
        except KeyError:
            continue
    return out or list(it.scales)


def _run_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """The per-(condition, repeat) record kept in ``tasks.<task>.runs``."""
    keys = ("condition", "facets", "repeat", "seed", "form", "n_items", "n_answered")
    out = {k: entry.get(k) for k in keys}
    out.update({k: entry.get(k) for k in ("n_unparsed", "n_refused", "parse_rate")})
    out["scales"] = {
        name: {k: s.get(k) for k in ("score", "n_items", "n_answered", "method", "z")}
        for name, s in entry.get("scales", {}).items()
    }
    return out
