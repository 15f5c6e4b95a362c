"""``psym run PLAN [--shard i/N]``: run a plan, or one shard of it, into its own directory.

A shard directory holds ``plan.jsonl`` (a copy of the plan), ``shard.json`` (which shard, which
units, ``"complete": true`` once finished) and the usual ``results.json`` / ``samples.jsonl``.
A shard killed half-way is resumed by running the same command again: every response it had
received is in the response cache, so only the missing ones are requested.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core.administer.runner import evaluate
from psymetrics_core.backends.base import Reporter
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.writing import write_output
from psymetrics_core.records.rundir import LOCK_NAME, claim_run_dir
from psymetrics_core.study.plan import Plan, build_plan, check_plan_inputs, write_plan
from psymetrics_core.study.plan_records import ShardRecord, read_shard_file

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["run_plan", "read_shard_record", "SHARD_FILE"]

SHARD_FILE = "shard.json"


def read_shard_record(directory: Path) -> ShardRecord | None:
    """The ``shard.json`` of ``directory`` (typed), or None when there is none; a damaged or
    special file is one line naming it and the field."""
    path = Path(directory) / SHARD_FILE
    if not os.path.lexists(path):
        return None
    return read_shard_file(path)


def _write_record(directory: Path, record: dict[str, Any]) -> None:
    text = json.dumps(record, indent=2) + "\n"
    write_output(directory / SHARD_FILE, text, what="shard record")


def check_plan_here(plan: Plan, session: Session) -> None:
    """Stop with one line when this installation (the plugins of ``session``) would run a
    different plan (versions, or a population file or persona template changed since)."""
    check_plan_inputs(plan)
    here = build_plan(plan.settings, session)
    if here.hash != plan.hash:
        keys = ("psymetrics", "instruments", "item_files")
        diff = [k for k in keys if here.versions.get(k) != plan.versions.get(k)]
        what = ", ".join(diff) or "units"
        theirs = {k: plan.versions.get(k) for k in diff}
        ours = {k: here.versions.get(k) for k in diff}
        raise PsymError(
            f"this installation does not reproduce the plan ({what} differ: plan {theirs}, "
            f"here {ours})"
        )


def run_plan(
    plan: Plan,
    output: Path,
    shard: tuple[int, int] = (1, 1),
    *,
    session: Session,
    concurrency: int | None = None,
    cache: bool = True,
    progress: Callable[[str, int], Reporter] | None = None,
    backend: Any = None,
) -> dict[str, Any]:
    """Run shard ``shard`` = (i, N) of ``plan`` into ``output`` with the plugins of
    ``session``; returns its ``shard.json``.

    A directory holding the same shard complete is left as it is; one holding a different plan
    or shard is an error; an incomplete one (killed run) is run again from the response cache.
    ``output`` is locked for the run (``rundir.claim_run_dir``, the claim handed on to
    ``evaluate``), so two runs of one shard directory do not interleave.
    """

    index, count = shard
    units = plan.shard(index, count)
    output = Path(output)
    with claim_run_dir(output, resume=True) as run_dir:  # locked; a shard is resumed
        old = read_shard_record(output)
        if old is not None:
            if old.plan != plan.hash or old.shard != [index, count]:
                raise PsymError(
                    f"{output} holds shard {old.shard} of plan {old.plan[:12]}; "
                    f"use another --output for shard {index}/{count} of plan {plan.hash[:12]}"
                )
            if old.complete:
                return old.model_dump()
        elif any(p.name != LOCK_NAME for p in output.iterdir()):
            raise PsymError(f"{output} exists and is not a shard directory; use another --output")
        check_plan_here(plan, session)
        record: dict[str, Any] = {
            "plan": plan.hash,
            "shard": [index, count],
            "units": [u.hash for u in units],
            "complete": False,
        }
        write_plan(plan, output / "plan.jsonl")
        _write_record(output, record)
        if units:
            config = plan.settings.run_config(
                output=output, cache=cache, concurrency=concurrency, units={u.key for u in units}
            )
            evaluate(
                list(plan.settings.tasks),
                config,
                progress=progress,
                backend=backend,
                session=session,
                run_dir=run_dir,
            )
        else:  # more shards than units
            write_output(output / "samples.jsonl", "", what="samples file")
        record["complete"] = True
        _write_record(output, record)
        return record
