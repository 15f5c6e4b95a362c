"""Run plans: a study as a list of units of work (model, task, cell, repeat, seed).

``psym plan`` writes a plan as JSON lines: a header line with the run settings and the versions
that produced it, then one line per unit with a content hash. ``psym run PLAN --shard i/N`` runs
every N-th unit (:mod:`study.shard`) and ``psym merge`` puts the shards back together
(:mod:`study.merge`). Unit order is the order a single ``psym eval`` administers them
(task, then cell, then repeat), so merged output is in the same order as a single-process run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core import __version__
from psymetrics_core.administer.administration.interview import check_impute, check_judge_batch
from psymetrics_core.administer.conditions import cells_for
from psymetrics_core.administer.config import RunConfig
from psymetrics_core.administer.population import (
    check_population_options,
    cross_with_population,
    input_digests,
    respondent_conditions,
    template_ref,
)
from psymetrics_core.administer.preflight import check_generation_options, check_run_numbers
from psymetrics_core.backends.base import parse_model_args
from psymetrics_core.backends.cache import _VOLATILE
from psymetrics_core.base.bounds import bound
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import read_text
from psymetrics_core.base.regular import require_regular_file
from psymetrics_core.base.writing import write_output
from psymetrics_core.study.plan_records import (
    PLAN_FORMAT,
    PlanHeader,
    SettingsRecord,
    UnitRecord,
    parse_line,
    secret_args,
    validated,
)

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = [
    "PlanSettings",
    "Unit",
    "Plan",
    "build_plan",
    "read_plan",
    "write_plan",
    "parse_shard",
    "check_plan_inputs",
]

SHARD_COUNT = "--shard N"  # the bound of N in --shard i/N (docs/reference/bounds.md)

# a secret in a plan would be copied into every shard directory and batch record
_NO_SECRETS = (
    "a plan file must not hold secrets (a key, or credentials inside a URL such as "
    "https://user:KEY@host or ?api_key=KEY); pass the name of an environment variable "
    "instead (api_key_env=OPENAI_API_KEY)"
)
# evaluate() arguments that change no response and no score (left out of the content hash)
_SPEED_KNOBS = ("concurrency",)
# the settings of a population plan (left out of other plans, whose hashes stay as they were)
_POPULATION_KEYS = ("population", "persona_template", "sample")


# the RunConfig fields a plan records, in the order of its header (the others belong to one run
# of it: a shard's output, units, cache and concurrency)
PLAN_FIELDS = tuple(name for name in SettingsRecord.model_fields if name != "tasks")


@dataclass(frozen=True)
class PlanSettings:
    """What a plan runs: its tasks and the ``RunConfig`` every shard runs with (its
    ``PLAN_FIELDS``; a shard adds its output, units, cache and concurrency). The plan's header
    is that config serialized (:meth:`to_json`) and read back (:meth:`from_json`); ``psym plan``
    builds the config with ``psym eval``'s own function (``cli.eval_cmd.run_config``)."""

    tasks: tuple[str, ...]
    config: RunConfig

    @classmethod
    def of(
        cls, tasks: Sequence[str], config: RunConfig | None = None, **options: Any
    ) -> PlanSettings:
        """The settings of a plan of ``tasks`` run with ``config`` (or ``options``, its fields),
        in the form a plan records: the ``PLAN_FIELDS`` only, arguments parsed, files (item
        texts, population, a persona template file) as absolute paths."""
        c = config if config is not None else RunConfig.from_options(**options)
        plan = RunConfig(**{name: getattr(c, name) for name in PLAN_FIELDS})
        return cls(
            tuple(tasks),
            plan.replace(
                model_args=_args(c.model_args),
                judge_model_args=_args(c.judge_model_args) or None,
                norm_group=_norm_groups(c.norm_group) or None,
                task_options={t: dict(o) for t, o in (c.task_options or {}).items()} or None,
                item_files={k: Path(v).resolve() for k, v in (c.item_files or {}).items()} or None,
                population=Path(c.population).resolve() if c.population is not None else None,
                persona_template=template_ref(c.persona_template),
            ),
        )

    @property
    def model_args(self) -> dict[str, str]:
        """The backend arguments of the plan's model."""
        return _args(self.config.model_args)

    @property
    def item_files(self) -> dict[str, str]:
        """The item-text files by task, as absolute paths."""
        return {k: str(v) for k, v in (self.config.item_files or {}).items()}

    def run_config(self, **changes: Any) -> RunConfig:
        """The ``RunConfig`` of a run of this plan, with ``changes`` (output, units, ...)."""
        return self.config.replace(**changes)

    def to_json(self) -> dict[str, Any]:
        """JSON form (the plan's header): ``tasks`` and the ``PLAN_FIELDS`` of the config."""
        c = self.config
        d: dict[str, Any] = {"tasks": list(self.tasks)}
        d |= {name: getattr(c, name) for name in PLAN_FIELDS}
        d |= {
            "model_args": self.model_args,
            "conditions": list(c.conditions),
            "norm_group": _norm_groups(c.norm_group),
            "task_options": {t: dict(o) for t, o in (c.task_options or {}).items()},
            "item_files": self.item_files,
            "judge_model_args": _args(c.judge_model_args),
            "population": str(c.population) if c.population is not None else None,
        }
        if c.population is None:
            for key in _POPULATION_KEYS:
                del d[key]
        for key in ("impute", "judge_batch"):
            if getattr(c, key) is None:
                del d[key]
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any], where: str = "plan") -> PlanSettings:
        """Inverse of :meth:`to_json`: every field typed (``SettingsRecord``); an unknown,
        missing or mistyped field is one line naming ``where`` and the field."""
        kw = validated(SettingsRecord, d, where, prefix="settings").model_dump()
        tasks = tuple(kw.pop("tasks"))
        kw["item_files"] = {k: Path(v) for k, v in kw["item_files"].items()} or None
        for key in ("norm_group", "task_options", "judge_model_args"):
            kw[key] = kw[key] or None
        return cls(tasks, RunConfig(**kw))


def _args(value: str | Mapping[str, str] | None) -> dict[str, str]:
    """Backend arguments as a dict (``k=v,k=v`` text parsed)."""
    return parse_model_args(value) if isinstance(value, str) else dict(value or {})


def _norm_groups(value: str | Mapping[str, str] | None) -> dict[str, str]:
    """``--norm-group`` as {task: group} (a bare group name is every task's: ``*``)."""
    return {"*": value} if isinstance(value, str) else dict(value or {})


@dataclass(frozen=True)
class Unit:
    """One unit of work: a task under one cell for one repeat (all its items)."""

    index: int
    model: str
    task: str
    cell: str
    repeat: int
    seed: int
    hash: str

    @property
    def key(self) -> tuple[str, str, int]:
        """(task, cell, repeat): how run records name this unit."""
        return (self.task, self.cell, self.repeat)


@dataclass(frozen=True)
class Plan:
    """A header (settings, versions) and the units, in administration order."""

    settings: PlanSettings
    versions: dict[str, Any]
    units: tuple[Unit, ...]

    @property
    def hash(self) -> str:
        """Content hash of the whole plan (its units' hashes in order)."""
        h = hashlib.sha256()
        for u in self.units:
            h.update(u.hash.encode())
        return h.hexdigest()

    def shard(self, index: int, count: int) -> tuple[Unit, ...]:
        """Units of shard ``index`` of ``count`` (1-based): every ``count``-th unit."""
        if count < 1 or not 1 <= index <= count:
            raise PsymError(f"--shard must be i/N with 1 <= i <= N, got {index}/{count}")
        bound(SHARD_COUNT).check(count)  # the bound holds where shard.json is written too
        return tuple(u for u in self.units if u.index % count == index - 1)


def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``i/N`` (1-based) into (i, N); N is bounded as ``--shards`` is (``SHARD_COUNT``
    in ``base.bounds``: 1-1000)."""
    i, sep, n = text.partition("/")
    try:
        index, count = int(i), int(n)
    except ValueError:
        index = count = 0
    if not sep or count < 1 or not 1 <= index <= count:
        raise PsymError(f"--shard must be i/N with 1 <= i <= N (e.g. 1/2), got {text[:40]!r}")
    bound(SHARD_COUNT).check(count)
    return index, count


def _digest(obj: Any) -> str:
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _file_digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise PsymError(f"--items file {path}: {exc.strerror or exc}") from exc


def build_plan(settings: PlanSettings, session: Session) -> Plan:
    """Validate ``settings`` like ``psym eval`` would (with the plugins of ``session``) and list
    the units in run order."""

    _check_settings(settings)
    c = settings.config
    instruments = {t: session.get_instrument(t) for t in settings.tasks}
    cells = cells_for(list(c.conditions), session, c.design)
    modes = [session.administration(cell.administration) for cell in cells]
    check_impute(c.impute, modes)  # as psym eval: refused at planning, not at psym run
    check_judge_batch(c.judge_batch, modes, "the plan")
    versions: dict[str, Any] = {
        "psymetrics": __version__,
        "instruments": {t: inst.version for t, inst in instruments.items()},
        "item_files": {k: _file_digest(v) for k, v in sorted(settings.item_files.items())},
    }
    if c.population is not None:  # every cell once per respondent, as `psym eval` runs
        versions.update(input_digests(c.population, c.persona_template))
        people = respondent_conditions(c.population, c.persona_template, c.sample, c.seed)
        cells = cross_with_population(cells, people)
    units: list[Unit] = []
    for task in settings.tasks:
        for cell in cells:
            for r in range(c.repeats):
                seed = c.seed + r
                h = unit_hash(settings, versions, task, cell.name, r, seed)
                units.append(Unit(len(units), c.model, task, cell.name, r, seed, h))
    return Plan(settings, versions, tuple(units))


def _check_settings(settings: PlanSettings) -> None:
    """The checks of ``psym eval`` on the plan's settings, and no secret in a plan."""
    c = settings.config
    if not settings.tasks:
        raise PsymError("no tasks given")
    check_run_numbers(c.limit, c.repeats, c.seed)
    check_generation_options(c.temperature, c.max_new_tokens, c.judge_max_new_tokens)
    for what, args in (
        ("--model-args", settings.model_args),
        ("--judge-model-args", _args(c.judge_model_args)),
    ):
        secret = secret_args(args)
        if secret:
            raise PsymError(f"{what} {', '.join(secret)}: {_NO_SECRETS}")
    check_population_options(c.population, c.persona_template, c.sample)


def unit_hash(
    settings: PlanSettings,
    versions: Mapping[str, Any],
    task: str,
    cell: str,
    repeat: int,
    seed: int,
) -> str:
    """Content hash of one unit: settings (no speed knobs), versions, task, cell, repeat, seed."""
    base = {k: v for k, v in settings.to_json().items() if k not in _SPEED_KNOBS}
    base.pop("tasks")
    for key in ("model_args", "judge_model_args"):  # batch size, concurrency, threads, ...
        base[key] = {k: v for k, v in base[key].items() if k not in _VOLATILE}
    instruments = dict(versions.get("instruments") or {})
    return _digest(
        {
            "settings": base,
            "versions": {**versions, "instruments": instruments.get(task)},
            "task": task,
            "cell": cell,
            "repeat": repeat,
            "seed": seed,
        }
    )


def write_plan(plan: Plan, path: str | Path, inputs: Sequence[str | Path] = ()) -> None:
    """Write the plan as JSON lines (header first), atomically (``base.writing``: a regular
    file or a new path, never one of ``inputs``, the files the command read)."""
    header = {
        "psym_plan": PLAN_FORMAT,
        "hash": plan.hash,
        "settings": plan.settings.to_json(),
        "versions": plan.versions,
    }
    lines = [json.dumps(header, ensure_ascii=False)]
    lines += [json.dumps(asdict(u), ensure_ascii=False) for u in plan.units]
    text = "\n".join(lines) + "\n"
    write_output(path, text, inputs=inputs, what="plan", make_parents=True)


def read_plan(path: Path) -> Plan:
    """Read a plan written by :func:`write_plan` through the bounded readers: a special file, a
    file over the input size cap, text that is not UTF-8 or JSON, a field that is unknown,
    missing, mistyped or holds a secret, or an edit the hashes do not match is one error
    naming the file, the line and the field."""
    path = require_regular_file(path, what="plan (written by `psym plan`)")
    text = read_text(path, what="plan")
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise PsymError(f"{path}: empty plan (write one with `psym plan`)")
    n0, raw = lines[0]
    head_row = parse_line(raw, path, n0)
    if head_row.get("psym_plan") != PLAN_FORMAT:
        raise PsymError(
            f"{path}, line {n0}, field 'psym_plan': expected a plan header with psym_plan: "
            f"{PLAN_FORMAT}"
        )
    where0 = f"{path}, line {n0}"
    header = validated(PlanHeader, head_row, where0)
    settings = PlanSettings.from_json(header.settings, where0)
    for key in ("model_args", "judge_model_args"):
        secret = secret_args(_args(getattr(settings.config, key)))
        if secret:
            raise PsymError(f"{where0}, field 'settings.{key}.{secret[0]}': {_NO_SECRETS}")
    versions = header.versions.model_dump(exclude_none=True)  # as build_plan wrote them
    units = tuple(
        _read_unit(path, n, line, settings, versions, i) for i, (n, line) in enumerate(lines[1:])
    )
    plan = Plan(settings, versions, units)
    if header.hash != plan.hash:
        raise PsymError(f"{where0}, field 'hash': does not match the units (edited plan?)")
    return plan


def _read_unit(
    path: Path, n: int, line: str, settings: PlanSettings, versions: dict[str, Any], index: int
) -> Unit:
    """Unit line ``n`` (the ``index``-th unit) of ``path``, checked against its hash."""
    where = f"{path}, line {n}"
    rec = validated(UnitRecord, parse_line(line, path, n), where)
    unit = Unit(**rec.model_dump())
    if unit.index != index:
        raise PsymError(f"{where}, field 'index': expected {index}, got {unit.index}")
    model = settings.config.model
    if unit.model != model:
        raise PsymError(f"{where}, field 'model': expected {model!r}, the plan's model")
    if unit.hash != unit_hash(settings, versions, unit.task, unit.cell, unit.repeat, unit.seed):
        raise PsymError(f"{where}, field 'hash': does not match the unit (edited plan?)")
    return unit


def check_plan_inputs(plan: Plan) -> None:
    """One line when the population file or persona template of a population plan is not the
    one the plan was written with (a changed file would give other respondents or prompts)."""
    c = plan.settings.config
    if c.population is None:
        return
    now = input_digests(c.population, c.persona_template)
    for key, what in (("population", "population file"), ("persona_template", "persona template")):
        was = str(plan.versions.get(key) or "")
        if now[key] != was:
            name = c.population if key == "population" else c.persona_template
            raise PsymError(
                f"{name}: the {what} has changed since the plan was written (sha256 "
                f"{was[:12] or 'none'} in the plan, {now[key][:12]} now); restore it or write "
                "a new plan with `psym plan`"
            )


def plan_units_by_key(units: Sequence[Unit]) -> dict[tuple[str, str, int], Unit]:
    """Units by (task, cell, repeat)."""
    return {u.key: u for u in units}
