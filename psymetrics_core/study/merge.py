"""``psym merge DIRS --output DIR``: shards of one plan back into one run directory.

Every unit of the plan must be in exactly one complete shard, and the shards must agree on the
versions that produced them (psymetrics, plugins, instruments, backend identity). Each shard's
``samples.jsonl`` and ``judge.jsonl`` must be those its own ``results.json`` describes (line
counts and sha256, field ``records``): a shard altered after its run is refused. The merged
``results.json`` and ``samples.jsonl`` are those a single process running the whole plan writes:
units in plan order, each task's first unit in full, every unit's summary under ``runs``.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.writing import write_output
from psymetrics_core.instruments.indicators import add_run_indicators
from psymetrics_core.records.digest import text_digest, verify_records
from psymetrics_core.records.inputs import run_inputs
from psymetrics_core.records.population_summary import with_population
from psymetrics_core.records.read import check_samples, iter_lines, read_results_record
from psymetrics_core.records.rundir import claim_run_dir
from psymetrics_core.records.samples import JudgeRecord, SampleRecord
from psymetrics_core.records.writer import write_results
from psymetrics_core.study.plan import Plan, Unit, read_plan, write_plan
from psymetrics_core.study.plan_records import ShardRecord
from psymetrics_core.study.shard import read_shard_record

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["merge_runs", "MergeReport"]

# results.json fields that must agree across shards (``created``/``platform`` may differ)
_AGREE = ("model", "model_args", "backend", "settings", "psymetrics", "plugins", "python")


@dataclass
class _Shard:
    directory: Path
    record: ShardRecord
    results: dict[str, Any] | None
    samples: dict[tuple[str, str, int], list[str]]
    judge: list[str]


@dataclass(frozen=True)
class MergeReport:
    """What ``psym merge`` did."""

    output: Path
    shards: int
    units: int
    samples: int


def _read_shard(directory: Path) -> _Shard:
    record = read_shard_record(directory)
    if record is None:
        raise PsymError(f"{directory}: no shard.json (not written by `psym run PLAN --shard`)")
    if not record.complete:
        raise PsymError(f"{directory}: shard {record.shard} is incomplete; run it again to resume")
    results = None
    samples: dict[tuple[str, str, int], list[str]] = {}
    path = directory / "samples.jsonl"
    if (directory / "results.json").is_file():  # the run reader: records checked as report's
        results, typed = read_results_record(directory / "results.json")
        check_samples(directory, typed)
    if path.is_file():
        for _, line, _, rec in iter_lines(
            path, SampleRecord, what="samples file", schema="samples"
        ):
            samples.setdefault((rec.task, rec.condition, rec.repeat), []).append(line)
    judge_path = directory / "judge.jsonl"
    judge = (
        [
            line
            for _, line, _, _ in iter_lines(
                judge_path, JudgeRecord, what="judge file", schema="judge"
            )
        ]
        if judge_path.is_file()
        else []
    )
    if results is not None:  # the files are those the shard's own results.json describes
        verify_records(directory, results.get("records"), what="shard")
    elif samples or judge:  # a shard of no units (more shards than units) records nothing
        what = "samples.jsonl" if samples else "judge.jsonl"
        raise PsymError(
            f"{directory / what}: holds records, but the shard has no results.json (its "
            f"shard.json lists {len(record.units)} unit(s)); run the shard again"
        )
    return _Shard(directory, record, results, samples, judge)


def _check_units(plan: Plan, shards: Sequence[_Shard]) -> dict[str, _Shard]:
    """Unit hash -> the shard that ran it; every unit exactly once."""
    owner: dict[str, _Shard] = {}
    seen = Counter(h for s in shards for h in s.record.units)
    dup = [h for h, n in seen.items() if n > 1]
    if dup:
        raise PsymError(f"{len(dup)} unit(s) are in more than one shard (e.g. {dup[0][:12]})")
    known = {u.hash for u in plan.units}
    stray = [h for h in seen if h not in known]
    if stray:
        raise PsymError(f"a shard ran unit {stray[0][:12]} that is not in the plan")
    for s in shards:
        for h in s.record.units:
            owner[h] = s
    missing = [u for u in plan.units if u.hash not in owner]
    if missing:
        u = missing[0]
        raise PsymError(
            f"{len(missing)} unit(s) of the plan are in no shard, e.g. task {u.task}, "
            f"cell {u.cell}, repeat {u.repeat} (run the missing shard)"
        )
    return owner


def _check_versions(shards: Sequence[_Shard]) -> None:
    ran = [s for s in shards if s.results is not None]
    for s in ran[1:]:
        for key in _AGREE:
            a, b = ran[0].results.get(key), s.results.get(key)  # type: ignore[union-attr]
            if a != b:
                raise PsymError(
                    f"shards disagree on '{key}': {ran[0].directory} has {a!r}, "
                    f"{s.directory} has {b!r}"
                )


def _summed(values: Sequence[dict[str, Any] | None]) -> dict[str, Any] | None:
    present = [v for v in values if v]
    if not present:
        return None
    out = dict(present[0])
    for v in present[1:]:
        for k, x in v.items():
            if isinstance(x, int | float) and isinstance(out.get(k), int | float):
                out[k] = out[k] + x
    return out


def _results_of(shard: _Shard) -> dict[str, Any]:
    """The shard's ``results.json`` (one line when a shard that ran units has none)."""
    if shard.results is None:
        raise PsymError(
            f"{shard.directory}: no results.json, though its shard.json lists "
            f"{len(shard.record.units)} unit(s) as complete; run the shard again"
        )
    return shard.results


def _runs_of(shard: _Shard, unit: Unit) -> dict[str, Any]:
    """The run summary of ``unit`` in ``shard``'s results (one line when it is not there)."""
    where = f"{shard.directory / 'results.json'}: field 'tasks.{unit.task}"
    entry = _results_of(shard)["tasks"].get(unit.task)
    if entry is None:
        raise PsymError(f"{where}': missing, though the shard ran unit {unit.hash[:12]}")
    for run in entry.get("runs") or []:
        if run.get("condition") == unit.cell and run.get("repeat") == unit.repeat:
            return dict(run)
    raise PsymError(
        f"{where}.runs': no run of cell {unit.cell}, repeat {unit.repeat} (unit "
        f"{unit.hash[:12]} of the plan)"
    )


def _calls(judge: Any) -> int:
    """A judge record's ``n_calls`` (0 when it is not a count)."""
    n = judge.get("n_calls") if isinstance(judge, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0


def _stage_settings(judges: list[Any]) -> dict[str, Any]:
    """The shards' ``stage_settings`` together: per stage, every reply length any asked for."""
    out: dict[str, dict[str, Any]] = {}
    for j in judges:
        stages = j.get("stage_settings") if isinstance(j, dict) else None
        for name, st in (stages if isinstance(stages, dict) else {}).items():
            if not isinstance(st, dict):
                continue
            seen = out.setdefault(str(name), dict(st))
            lengths = {*_ints(seen.get("max_new_tokens")), *_ints(st.get("max_new_tokens"))}
            if lengths:
                seen["max_new_tokens"] = sorted(lengths)
    return out


def _ints(value: Any) -> list[int]:
    """The whole numbers of a list (a malformed value: none)."""
    items = value if isinstance(value, list) else []
    return [n for n in items if isinstance(n, int) and not isinstance(n, bool)]


def _task_entry(
    head: dict[str, Any], runs: list[dict[str, Any]], instrument: Any
) -> dict[str, Any]:
    """A task's merged entry: its first unit in full, every unit under ``runs``.

    The head shard's task-level indicators were computed over that shard's runs only, so the
    first unit's own indicators are taken from its run summary and the across-runs ones are
    recomputed over all merged runs with the runner's ``add_run_indicators``.
    """
    entry: dict[str, Any] = {k: v for k, v in head.items() if k not in ("runs", "population")}
    entry["runs"] = runs
    if "indicators" in entry:
        entry["indicators"] = copy.deepcopy(runs[0].get("indicators") or {})
        add_run_indicators(entry, instrument)
    return entry


def merge_runs(
    dirs: Sequence[Path], output: Path, session: Session, *, overwrite: bool = False
) -> MergeReport:
    """Merge the complete shard directories ``dirs`` of one plan into ``output`` (the tasks'
    instruments, for the run indicators, from ``session``).

    ``output`` is claimed as a run directory (``rundir.claim_run_dir``): one that already holds
    a run is refused unless ``overwrite``, and one another process is writing is refused.
    """
    if not dirs:
        raise PsymError("no shard directories given")
    shards = [_read_shard(Path(d)) for d in dirs]
    plans = {s.record.plan for s in shards}
    if len(plans) != 1:
        a, b = shards[0], next(s for s in shards if s.record.plan != shards[0].record.plan)
        raise PsymError(
            f"the directories hold shards of different plans: {a.directory} of plan "
            f"{a.record.plan[:12]}, {b.directory} of plan {b.record.plan[:12]}"
        )
    plan = read_plan(shards[0].directory / "plan.jsonl")
    if plan.hash not in plans:
        raise PsymError(f"{shards[0].directory}/plan.jsonl is not the plan its shard ran")
    counts = {tuple(s.record.shard) for s in shards}
    owner = _check_units(plan, shards)
    _check_versions(shards)
    if len(counts) != len(shards):
        raise PsymError("the same shard is given twice")

    first = _results_of(next((s for s in shards if s.results is not None), shards[0]))
    merged: dict[str, Any] = copy.deepcopy(first)
    merged["tasks"] = {}
    lines: list[str] = []
    for task in plan.settings.tasks:
        units = [u for u in plan.units if u.task == task]
        head = _results_of(owner[units[0].hash])
        runs = []
        for u in units:
            runs.append(_runs_of(owner[u.hash], u))
            lines += owner[u.hash].samples.get(u.key, [])
        merged["tasks"][task] = _task_entry(head["tasks"][task], runs, session.get_instrument(task))
    ran = [s.results for s in shards if s.results is not None]
    merged["cache"] = _summed([r.get("cache") for r in ran])
    if any("usage" in r for r in ran):
        merged["usage"] = _summed([r.get("usage") for r in ran])
    judges = [r["judge"] for r in ran if "judge" in r]
    if judges:
        merged["judge"] = {**judges[0], "n_calls": sum(_calls(j) for j in judges)}
        if any("stage_settings" in j for j in judges):
            merged["judge"]["stage_settings"] = _stage_settings(judges)
    merged["created"] = max(str(r.get("created", "")) for r in ran)
    merged["merged_from"] = [
        {"directory": str(s.directory), "shard": s.record.shard} for s in shards
    ]

    output = Path(output)
    for s in shards:
        if output.resolve() == s.directory.resolve():
            raise PsymError(f"--output {output} is one of the shard directories; choose another")
    judge_lines = [x for s in shards for x in s.judge]
    # the output is claimed like `psym eval`'s: an existing run is refused unless overwrite, and
    # a second writer (another merge, eval or run into the same directory) stops at once
    inputs = run_inputs(s.directory for s in shards)
    texts = {"samples.jsonl": "".join(x + "\n" for x in lines)}
    if judge_lines:
        texts["judge.jsonl"] = "".join(x + "\n" for x in judge_lines)
    merged["records"] = {name: text_digest(text) for name, text in texts.items()}
    with claim_run_dir(output, overwrite=overwrite):
        write_plan(plan, output / "plan.jsonl", inputs=inputs)
        for name, text in texts.items():
            what = "merged samples" if name == "samples.jsonl" else "merged judge calls"
            write_output(output / name, text, inputs=inputs, what=what)
        write_results(output / "results.json", with_population(merged))  # over every shard
    return MergeReport(output, len(shards), len(plan.units), len(lines))
