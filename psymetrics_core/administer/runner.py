"""The evaluation pipeline behind ``psym eval``: resolve tasks, then let each task's kind run
every (cell, repeat); record results, samples and judge calls.

The runner dispatches on a task's kind once (``Session.kind_of``); the kinds
(``psymetrics_core.administer.kinds``) do the per-cell work.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import closing, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from psymetrics_core.administer.conditions import cells_for
from psymetrics_core.administer.judge import DEFAULT_JUDGE_MAX_NEW_TOKENS, Judge
from psymetrics_core.administer.kinds.base import CellRun, instrument_record
from psymetrics_core.administer.options import DEFAULT_MAX_NEW_TOKENS, with_options
from psymetrics_core.administer.preflight import (
    check_generation_options,
    check_parser,
    check_task_options,
)
from psymetrics_core.backends.base import (
    Backend,
    GenerationSettings,
    Reporter,
    as_backend,
    call_backend,
    parse_model_args,
)
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Instrument
from psymetrics_core.instruments.indicators import add_run_indicators
from psymetrics_core.instruments.item_texts import check_item_files, require_item_texts
from psymetrics_core.instruments.norms import check_norm_groups, resolve_norm_group
from psymetrics_core.pluginsys.failures import hook_failure
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.rundir import ensure_run_dir
from psymetrics_core.records.writer import SampleWriter, provenance, redact, write_results

__all__ = [
    "evaluate",
    "make_backend",
    "instrument_record",
    "set_concurrency",
    "call_backend",
    "resolve_tasks",
]

MODES = ("generate", "logprob")


def make_backend(
    model: str, model_args: str | dict[str, str] | None = None, session: Session | None = None
) -> Any:
    """Build the backend registered as ``model`` with lm-eval style ``model_args`` (from a
    fresh session of the installed plugins when no ``session`` is given)."""
    return (session if session is not None else Session()).make_backend(model, model_args)


def set_concurrency(be: Any, n: int) -> None:
    """Bound the requests ``be`` keeps in flight (ignored by backends that run one at a time)."""
    if n < 1:
        raise PsymError("--concurrency must be at least 1")
    as_backend(be).set_concurrency(n)


def resolve_tasks(
    tasks: Sequence[str | Instrument],
    session: Session,
    form: str = "original",
    item_files: Mapping[str, str | Path] | None = None,
    task_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Instrument]:
    """Task ids or ready task objects -> instruments with their item texts and options."""
    opts = task_options or {}
    out = []
    for t in tasks:
        inst = t if isinstance(t, Instrument) else session.get_instrument(t)
        inst = require_item_texts(inst, form, item_files)
        out.append(with_options(inst, opts.get(inst.id), opts.get("*")))
    for key in opts.get("*") or {}:  # a shared option no task takes would be dropped silently
        if not any(key in (inst.extra.get("options") or {}) for inst in out):
            raise PsymError(
                f"task option '{key}' (for every task, '*'): none of the tasks "
                f"({', '.join(i.id for i in out)}) takes it"
            )
    return out


def evaluate(
    tasks: Sequence[str | Instrument],
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
    session: Session | None = None,
    units: Collection[tuple[str, str, int]] | None = None,
    overwrite: bool = False,
    resume: bool = False,
) -> dict[str, Any]:
    """Administer ``tasks`` to a model and return the results dict (also written to ``output``).

    ``tasks`` are task ids or ready task objects (e.g. ``ProbeTask``s built by a command).
    ``session`` supplies the plugins (default: a fresh session of the installed plugins, see
    ``psymetrics_core.pluginsys.session``); it is handed to every kind in ``CellRun.session``.
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
    ``max_new_tokens`` defaults to 24 for questionnaires and to a task's own length.
    ``task_options`` maps task id (or ``"*"`` for every task that accepts the key) to options
    the task reads as ``instrument.options``. ``judge_model`` (default: the evaluated model)
    answers the judge stages of judged tasks; its calls share the run's response cache.
    ``units`` restricts the run to these (task, cell name, repeat) units of work (one shard of
    a plan, see ``psymetrics_core.study.plan``); tasks with none are left out of the results.
    ``output`` is claimed for the run (``rundir.ensure_run_dir``): locked, and a directory that
    already holds a run is refused unless ``overwrite`` or ``resume``. A third-party hook that
    raises stops the run with a ``PsymError`` naming the plugin and the hook; the samples and
    cached responses received so far are kept.
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
    ids = [t.id if isinstance(t, Instrument) else t for t in tasks]
    check_item_files(ids, item_files)
    check_task_options(ids, task_options)
    sess = session if session is not None else Session()
    claim = (
        ensure_run_dir(Path(output), overwrite=overwrite, resume=resume)
        if output is not None
        else nullcontext()
    )
    with claim:
        cells = cells_for(list(conditions), sess, design)
        instruments = resolve_tasks(tasks, sess, form, item_files, task_options)
        kinds = {inst.id: sess.kind_of(inst) for inst in instruments}  # dispatch once per task
        groups = {"*": norm_group} if isinstance(norm_group, str) else dict(norm_group or {})
        check_norm_groups(instruments, groups)
        for inst in instruments:
            check_parser(inst, sess)
        settings = GenerationSettings(
            mode, max_new_tokens or DEFAULT_MAX_NEW_TOKENS, temperature, seed
        )
        be = as_backend(backend if backend is not None else sess.make_backend(model, model_args))
        if concurrency is not None:
            set_concurrency(be, concurrency)
        cached = _with_cache(be, backend is None if cache is None else cache)
        use: Backend = be if cached is None else cached  # what the tasks call
        out_dir = Path(output) if output is not None else None
        writer = SampleWriter(out_dir / "samples.jsonl" if out_dir else None)
        args = model_args if isinstance(model_args, dict) else parse_model_args(model_args)
        judge = _judge(sess, model, args, judge_model, judge_model_args, use, cached, seed, out_dir)
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
            **provenance(sess.records),
            "tasks": {},
        }
        stream: Any = None
        try:
            with closing(judge):  # judge.jsonl is closed when the cells are done
                planned: list[tuple[Instrument, Any, list[CellRun]]] = []
                for inst in instruments:
                    todo = [
                        (cell, r)
                        for cell in cells
                        for r in range(repeats)
                        if units is None or (inst.id, cell.name, r) in units
                    ]
                    if not todo:
                        continue
                    kind = kinds[inst.id]
                    n = kind.count(inst, form, limit, sess) * len(todo)
                    reporter = progress(inst.id, n) if progress else None
                    task_settings = settings
                    if max_new_tokens is None and "max_new_tokens" in inst.extra:
                        task_settings = replace(
                            settings, max_new_tokens=inst.extra["max_new_tokens"]
                        )
                    cell_runs = []
                    for cell, r in todo:
                        bound = cell.bind(seed + r)
                        cell_runs.append(CellRun(
                            inst, use, replace(task_settings, seed=seed + r), bound.form(form),
                            limit, writer, reporter, bound, r, resolve_norm_group(inst, groups),
                            sess, judge,
                        ))  # fmt: skip
                    planned.append((inst, kind, cell_runs))
                if cached is not None:  # one request stream for the whole grid (scheduler.py)
                    from psymetrics_core.administer.scheduler import start_stream

                    stream = start_stream(
                        [(k, run) for _, k, runs in planned for run in runs], cached
                    )
                    cached.stream = stream
                for inst, kind, cell_runs in planned:
                    runs = []
                    for run in cell_runs:
                        if stream is not None:
                            stream.before(run)
                        runs.append(kind.run_cell(run))
                    results["tasks"][inst.id] = {
                        **runs[0],
                        "runs": [_run_summary(e) for e in runs],
                    }
                    add_run_indicators(results["tasks"][inst.id], inst)
        except PsymError:
            raise
        except Exception as exc:
            failure = hook_failure(sess, exc)
            if failure is None:
                raise
            raise failure from None
        finally:
            if stream is not None:
                stream.close()
                cached.stream = None
            writer.close()
            if judge.n_calls:
                results["judge"] = judge.record()
            if cached is not None:
                if stream is not None:  # the cells read from the cache what the stream fetched
                    cached.hits = max(0, cached.hits - stream.fetched)
                    cached.misses += stream.fetched
                results["cache"] = cached.summary()
                cached.cache.close()
        usage = be.usage()
        if usage is not None:
            results["usage"] = usage
        if out_dir is not None:
            write_results(out_dir / "results.json", results)
    return results


def _judge(
    sess: Session,
    model: str,
    args: dict[str, str],
    judge_model: str | None,
    judge_model_args: str | dict[str, str] | None,
    use: Backend,
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

    def build() -> Any:
        built = sess.make_backend(str(judge_model), jargs)
        if cached is None:
            return built
        from psymetrics_core.backends.cache import CachedBackend

        return CachedBackend(built, cached.cache)

    return Judge(
        model=model if same else str(judge_model),
        model_args=args if same else jargs,
        backend=use if same else None,
        factory=None if same else build,
        seed=seed,
        max_new_tokens=DEFAULT_JUDGE_MAX_NEW_TOKENS,
        records=out_dir / "judge.jsonl" if out_dir else None,
        same_as_evaluated=same,
    )


def _with_cache(be: Backend, enabled: bool) -> Any:
    from psymetrics_core.backends.cache import CachedBackend, ResponseCache

    return CachedBackend(be, ResponseCache()) if enabled else None


def _run_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """The per-(condition, repeat) record kept in ``tasks.<task>.runs``."""
    keys = ("condition", "facets", "repeat", "seed", "form", "n_items", "n_answered")
    out = {k: entry.get(k) for k in keys}
    out.update({k: entry.get(k) for k in ("n_unparsed", "n_refused", "parse_rate")})
    keep = ("score", "n_items", "n_answered", "method", "z")
    out["scales"] = {
        name: {k: s.get(k) for k in keep} | ({"reason": s["reason"]} if "reason" in s else {})
        for name, s in entry.get("scales", {}).items()
    }
    if "indicators" in entry:
        out["indicators"] = entry["indicators"]
    return out
