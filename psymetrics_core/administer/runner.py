"""The evaluation pipeline behind ``psym eval``: resolve tasks, then let each task's kind run
every (cell, repeat); record results, samples and judge calls.

The runner dispatches on a task's kind once (``Session.kind_of``); the kinds
(``psymetrics_core.administer.kinds``) do the per-cell work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, closing, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from psymetrics_core.administer.administration.interview import check_impute, check_judge_batch
from psymetrics_core.administer.conditions import Cell, cells_for
from psymetrics_core.administer.config import RunConfig
from psymetrics_core.administer.distribution import distribution_methods
from psymetrics_core.administer.judge import DEFAULT_JUDGE_MAX_NEW_TOKENS, Judge
from psymetrics_core.administer.kinds.base import CellRun, TaskKind, instrument_record
from psymetrics_core.administer.options import DEFAULT_MAX_NEW_TOKENS, with_options
from psymetrics_core.administer.population import (
    check_population_options,
    cross_with_population,
    population_files,
    respondent_conditions,
)
from psymetrics_core.administer.preflight import (
    check_generation_options,
    check_parser,
    check_run_numbers,
    check_task_options,
)
from psymetrics_core.administer.scheduler import Stream, StreamedBackend, start_stream
from psymetrics_core.backends.base import (
    Backend,
    GenerationSettings,
    Reporter,
    as_backend,
    call_backend,
    parse_model_args,
)
from psymetrics_core.backends.cache import CachedBackend, ResponseCache
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Instrument
from psymetrics_core.instruments.indicators import add_run_indicators
from psymetrics_core.instruments.item_texts import (
    check_form,
    check_item_files,
    require_item_texts,
)
from psymetrics_core.instruments.norms import check_norm_groups, resolve_norm_group
from psymetrics_core.pluginsys.failures import hook_failure
from psymetrics_core.pluginsys.loader import plugin_versions
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.digest import record_digests
from psymetrics_core.records.population_summary import with_population
from psymetrics_core.records.provenance import run_provenance
from psymetrics_core.records.rundir import RunDir, claim_run_dir
from psymetrics_core.records.writer import SampleWriter, provenance, redact, write_results

__all__ = [
    "RunConfig",
    "evaluate",
    "check_run",
    "make_backend",
    "instrument_record",
    "set_concurrency",
    "call_backend",
    "resolve_tasks",
]

MODES = ("generate", "logprob")


def make_backend(model: str, model_args: str | dict[str, str] | None, session: Session) -> Any:
    """Build the backend registered as ``model`` in ``session`` with lm-eval style
    ``model_args``."""
    return session.make_backend(model, model_args)


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
    kinds = session.kinds()
    for t in tasks:
        inst = t if isinstance(t, Instrument) else session.get_instrument(t)
        kind = kinds.get(inst.kind)
        if kind is None or kind.asks_model:  # a kind asking no model renders no item text
            inst = require_item_texts(inst, form, item_files)
        else:
            check_form(inst, form)
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
    config: RunConfig | None = None,
    *,
    session: Session,
    backend: Any = None,
    progress: Callable[[str, int], Reporter] | None = None,
    run_dir: RunDir | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Administer ``tasks`` to a model and return the results dict (also written to
    ``config.output``, once, at the end of the run).

    ``tasks`` are task ids or ready task objects (e.g. ``ProbeTask``s built by a command).
    ``config`` holds the run's options (``RunConfig``); without one, ``options`` are its fields
    as keywords (an unknown keyword is a ``TypeError``). ``session`` supplies the plugins
    (required: ``psymetrics_core.evaluate`` builds one of the installed plugins when its caller
    gives none); it is handed to every kind in ``CellRun.session``. ``backend`` overrides
    ``config.model``/``model_args`` with a ready backend object. ``progress(task, n_prompts)``
    may return a reporter that is advanced as prompts finish.

    Every (task, cell, repeat) is run by the task's kind; ``tasks.<task>``'s own fields are the
    first (cell, repeat) run, ``tasks.<task>.runs`` all of them, and a population run adds the
    population-level entry ``tasks.<task>.population`` (the spread across respondents, what
    every screen shows; the own fields are then over every cell: ``records.population_task``).
    Cells are the ``conditions`` expanded by ``design`` (``conditions.build_cells``), each run
    ``repeats`` times with seeds ``seed + r``. ``cache`` stores every response in the response
    cache before use (default: on for backends built by name, off for a ready ``backend``);
    ``concurrency`` bounds the requests in flight of API backends. ``norm_group`` picks the
    human norm group for z-scores. ``max_new_tokens`` defaults to 24 for questionnaires and to a
    task's own length.
    ``task_options`` maps task id (or ``"*"``) to options the task reads as
    ``instrument.options``. ``judge_model`` (default: the evaluated model) answers the judge
    stages of judged tasks; its calls share the run's response cache. ``units`` restricts the
    run to these (task, cell name, repeat) units (one shard of a plan, see
    ``psymetrics_core.study.plan``); tasks with none are left out of the results.
    ``output`` is claimed for the run (``rundir.claim_run_dir``): locked, and a directory that
    already holds a run is refused unless ``overwrite`` or ``resume``; a caller that holds it
    already (the plan runner) passes its claim as ``run_dir`` instead. A third-party hook that
    raises stops the run with a ``PsymError`` naming the plugin and the hook; the samples and
    cached responses received so far are kept.
    """
    if config is None:
        config = RunConfig.from_options(**options)
    elif options:
        raise TypeError("evaluate(): pass a RunConfig or keyword options, not both")
    check_run(tasks, config)
    sess = session
    with _claim(config, run_dir):
        run = _start(tasks, config, sess, backend)
        try:
            _administer(run, progress)
        except PsymError:
            raise
        except Exception as exc:
            failure = hook_failure(sess, exc)
            if failure is None:
                raise
            raise failure from None
        finally:
            _close(run)
        _finish(run)
    return run.results


def _claim(config: RunConfig, run_dir: RunDir | None) -> AbstractContextManager[Any]:
    """The claim of ``config.output`` for the run: the caller's ``run_dir`` (which must be that
    directory), else a new one (none without an output)."""
    if run_dir is not None:
        if config.output is None or Path(config.output).resolve() != run_dir.path.resolve():
            raise PsymError(
                f"evaluate(): run_dir {run_dir.path} is not the run's output ({config.output})"
            )
        return nullcontext(run_dir)
    if config.output is None:
        return nullcontext()
    return claim_run_dir(config.output, overwrite=config.overwrite, resume=config.resume)


def check_run(tasks: Sequence[str | Instrument], config: RunConfig) -> None:
    """One-line errors for a run that cannot start (before anything is loaded)."""
    if config.mode not in MODES:
        raise PsymError(f"--mode must be one of {', '.join(MODES)}, got {config.mode!r}")
    check_run_numbers(config.limit, config.repeats, config.seed, config.concurrency)
    if not tasks:
        raise PsymError("no tasks given")
    check_generation_options(config.temperature, config.max_new_tokens, config.judge_max_new_tokens)
    ids = [t.id if isinstance(t, Instrument) else t for t in tasks]
    check_item_files(ids, config.item_files)
    check_task_options(ids, config.task_options)
    check_population_options(config.population, config.persona_template, config.sample)


@dataclass
class _Run:
    """One run under way: what ``evaluate`` sets up before the cells run and closes after."""

    config: RunConfig
    session: Session
    cells: list[Cell]
    instruments: list[Instrument]
    kinds: dict[str, TaskKind]
    groups: dict[str, str]
    settings: GenerationSettings
    backend: Backend  # the evaluated model as built
    cached: Any  # its CachedBackend (None: the run has no response cache)
    front: CachedBackend | StreamedBackend  # what the tasks call: ``cached``, or the stream's
    writer: SampleWriter
    judge: Judge
    results: dict[str, Any]
    stream: Stream | None = None

    @property
    def use(self) -> Backend:
        """What the tasks call: the cached backend where the run has a cache, else the backend
        reading the run's request stream."""
        return self.front


def _start(
    tasks: Sequence[str | Instrument], config: RunConfig, sess: Session, backend: Any
) -> _Run:
    """Resolve the tasks and cells, build the backend, the writer and the judge."""
    cells = cells_for(list(config.conditions), sess, config.design)
    if config.population is not None:
        people = respondent_conditions(
            config.population, config.persona_template, config.sample, config.seed
        )
        cells = cross_with_population(cells, people)
    modes = [sess.administration(c.administration) for c in cells]
    check_impute(config.impute, modes)
    check_judge_batch(config.judge_batch, modes, "the run")
    instruments = resolve_tasks(tasks, sess, config.form, config.item_files, config.task_options)
    kinds = {inst.id: sess.kind_of(inst) for inst in instruments}  # dispatch once per task
    norm = config.norm_group
    groups = {"*": norm} if isinstance(norm, str) else dict(norm or {})
    check_norm_groups(instruments, groups)
    for inst in instruments:
        check_parser(inst, sess)
    settings = GenerationSettings(
        config.mode,
        config.max_new_tokens or DEFAULT_MAX_NEW_TOKENS,
        config.temperature,
        config.seed,
    )
    args = _model_args(config.model_args)
    be = as_backend(backend if backend is not None else sess.make_backend(config.model, dict(args)))
    if config.concurrency is not None:
        set_concurrency(be, config.concurrency)
    cached = _with_cache(be, backend is None if config.cache is None else config.cache)
    front = cached if cached is not None else StreamedBackend(be)
    out_dir = config.output
    writer = SampleWriter(out_dir / "samples.jsonl" if out_dir else None)
    judge = _judge(sess, config, args, be if cached is None else cached, cached)
    results = _header(config, args, be, settings, cells, plugin_versions(sess.records))
    if any(k.asks_model for k in kinds.values()):
        dist = distribution_methods(cells, config.mode, config.repeats, config.temperature, sess)
        results = {**results, "distribution": dist}
    results["tasks"] = results.pop("tasks")
    return _Run(
        config,
        sess,
        cells,
        instruments,
        kinds,
        groups,
        settings,
        be,
        cached,
        front,
        writer,
        judge,
        results,
    )


def _header(
    config: RunConfig,
    args: dict[str, str],
    be: Backend,
    settings: GenerationSettings,
    cells: list[Cell],
    plugins: dict[str, dict[str, str | None]],
) -> dict[str, Any]:
    """The run's ``results.json`` before any task ran: model, settings, design, versions."""
    seed = config.seed
    return {
        "model": config.model,
        "model_args": redact(args),
        "backend": be.identity(),
        "cache": None,
        "settings": settings.to_json(),
        "seed": seed,
        "limit": config.limit,
        "form": config.form,
        "conditions": [c.name for c in cells],
        "design": config.design,
        "repeats": config.repeats,
        "seeds": [seed + r for r in range(config.repeats)],
        **({"impute": config.impute} if config.impute else {}),
        **provenance(plugins),
        "tasks": {},
    }


def _administer(run: _Run, progress: Callable[[str, int], Reporter] | None) -> None:
    """Run every planned (task, cell, repeat), the prompts known ahead streamed in one go."""
    with closing(run.judge):  # judge.jsonl is closed when the cells are done
        planned = [_plan_task(run, inst, progress) for inst in run.instruments]
        todo = [p for p in planned if p is not None]
        # one request stream for the whole grid, with or without a cache (scheduler.py)
        run.stream = start_stream([(k, c) for _, k, runs in todo for c in runs], run.front)
        run.front.stream = run.stream
        for inst, kind, cell_runs in todo:
            entries = []
            for cell_run in cell_runs:
                if run.stream is not None:
                    run.stream.before(cell_run)
                entries.append(kind.run_cell(cell_run))
            entry = {**entries[0], "runs": [run_summary(e) for e in entries]}
            add_run_indicators(entry, inst)
            run.results["tasks"][inst.id] = entry


def _plan_task(
    run: _Run, inst: Instrument, progress: Callable[[str, int], Reporter] | None
) -> tuple[Instrument, TaskKind, list[CellRun]] | None:
    """The ``CellRun`` of every (cell, repeat) of ``inst`` this run makes (None: none)."""
    config = run.config
    todo = [
        (cell, r)
        for cell in run.cells
        for r in range(config.repeats)
        if config.in_units(inst.id, cell.name, r)
    ]
    if not todo:
        return None
    kind = run.kinds[inst.id]
    n = kind.count(inst, config.form, config.limit, run.session) * len(todo)
    reporter = progress(inst.id, n) if progress else None
    settings = run.settings
    if config.max_new_tokens is None and "max_new_tokens" in inst.extra:
        settings = replace(settings, max_new_tokens=inst.extra["max_new_tokens"])
    norm_group = resolve_norm_group(inst, run.groups)
    cell_runs = []
    for cell, r in todo:
        seed = config.seed + r
        bound = cell.bind(seed)
        cell_runs.append(
            CellRun(
                inst,
                run.use,
                replace(settings, seed=seed),
                bound.form(config.form),
                config.limit,
                run.writer,
                reporter,
                bound,
                r,
                norm_group,
                run.session,
                run.judge,
                config.impute,
            )
        )
    return inst, kind, cell_runs


def _close(run: _Run) -> None:
    """End the stream, close the writer and the cache; record the judge and the cache use."""
    if run.stream is not None:
        run.stream.close()
        run.front.stream = None
    run.writer.close()
    if run.judge.n_calls:
        run.results["judge"] = run.judge.record()
    if run.cached is not None:
        run.results["cache"] = run.cached.summary()
        run.cached.cache.close()


def _finish(run: _Run) -> None:
    """Add usage, label, provenance and (population runs) each task's population entry; write
    ``results.json`` (the one write of the run)."""
    config = run.config
    run.results = results = with_population(run.results)
    usage = run.backend.usage()
    if usage is not None:
        results["usage"] = usage
    if config.label is not None:
        results["label"] = config.label
    if config.provenance:
        results["provenance"] = run_provenance(
            results.get("backend"),
            run.instruments,
            config.item_files,
            config.condition_args(),
            config.task_options,
            other=[
                *population_files(config.population, config.persona_template),
                *config.inputs,
            ],
        )
    if config.output is not None:
        results["records"] = record_digests(config.output)  # what `psym merge` verifies
        write_results(config.output / "results.json", results)


def _model_args(value: str | Mapping[str, str] | None) -> dict[str, str]:
    return dict(value) if isinstance(value, Mapping) else parse_model_args(value)


def _judge(
    sess: Session, config: RunConfig, args: dict[str, str], use: Backend, cached: Any
) -> Judge:
    """The run's judge: the evaluated model's own (cached) backend unless another is named.

    A separately named judge is built on first use and shares the run's response cache (none
    when the run has none).
    """
    model, judge_model = config.model, config.judge_model
    jargs = _model_args(config.judge_model_args)
    same = judge_model is None or (judge_model == model and (not jargs or jargs == args))

    def build() -> Any:
        built = sess.make_backend(str(judge_model), jargs)
        if cached is None:
            return built

        return CachedBackend(built, cached.cache)

    out_dir = config.output
    judge = Judge(
        model=model if same else str(judge_model),
        model_args=args if same else jargs,
        backend=use if same else None,
        factory=None if same else build,
        seed=config.seed,
        max_new_tokens=DEFAULT_JUDGE_MAX_NEW_TOKENS,
        records=out_dir / "judge.jsonl" if out_dir else None,
        same_as_evaluated=same,
        batch=config.judge_batch,
    )
    if config.judge_max_new_tokens:
        judge.settings = replace(judge.settings, max_new_tokens=config.judge_max_new_tokens)
    return judge


def _with_cache(be: Backend, enabled: bool) -> Any:

    return CachedBackend(be, ResponseCache()) if enabled else None


def run_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """The per-(condition, repeat) record kept in ``tasks.<task>.runs``."""
    keys = ("condition", "facets", "repeat", "seed", "form", "n_items", "n_answered")
    out = {k: entry.get(k) for k in keys}
    out.update({k: entry.get(k) for k in ("n_unparsed", "n_refused", "parse_rate")})
    keep = ("score", "n_items", "n_answered", "method", "z")
    out["scales"] = {
        name: {k: s.get(k) for k in keep}
        | ({"reason": s["reason"]} if "reason" in s else {})
        | ({"n": s["n"]} if "n" in s else {})  # the units a judged share rests on
        for name, s in entry.get("scales", {}).items()
    }
    if "indicators" in entry:
        out["indicators"] = entry["indicators"]
    return out
