"""Run the shards of a plan as tasks of an existing engine (Dask), then merge them.

``psym run PLAN --executor dask --shards N`` submits one task per shard to a Dask cluster (a
local one with N worker processes by default, or ``--scheduler ADDRESS``) and merges the shard
directories when all are done. Nothing is scheduled here beyond the plan file: Dask places the
tasks; a shard is ``psymetrics_core.study.shard.run_plan`` on one worker. A ``--scheduler``
address is checked before Dask is asked, and one where no scheduler answers within
``SCHEDULER_WAIT`` seconds is one line (docs/reference/bounds.md).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core.administer.api import session_or_default
from psymetrics_core.base.bounds import bound
from psymetrics_core.base.errors import PsymError
from psymetrics_core.study.merge import MergeReport, merge_runs
from psymetrics_core.study.plan import Plan
from psymetrics_core.study.shard import run_plan

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["run_sharded", "run_shard_task", "EXECUTORS"]

EXECUTORS = ("local", "dask")
SCHEDULER_WAIT = 10  # seconds to reach a --scheduler (docs/reference/bounds.md)


def run_shard_task(
    plan: Plan,
    output: str,
    index: int,
    count: int,
    options: dict[str, Any],
    session: Session | None = None,
) -> str:
    """One shard on a worker (a top-level function, so workers can unpickle it): ``session``
    is the caller's, or None on a Dask worker process, which builds its own session of the
    installed plugins (``administer.api.session_or_default``)."""

    run_plan(plan, Path(output), (index, count), session=session_or_default(session), **options)
    return output


def run_sharded(
    plan: Plan,
    output: Path,
    shards: int,
    *,
    session: Session,
    executor: str = "dask",
    scheduler: str | None = None,
    concurrency: int | None = None,
    cache: bool = True,
) -> MergeReport:
    """Run ``plan`` as ``shards`` shards under ``executor`` into ``output/shards/i-of-N``.

    The merged run directory is ``output`` itself. ``executor="local"`` runs the shards one
    after the other in this process (useful to check a plan before renting a cluster), with
    ``session``; Dask workers build their own.
    """
    if executor not in EXECUTORS:
        raise PsymError(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    bound("--shards").check(shards)
    if scheduler is not None and executor != "dask":
        raise PsymError("--scheduler is a Dask scheduler's address: use it with --executor dask")
    output = Path(output)
    if output.exists() and any(p.name != "shards" for p in output.iterdir()):
        raise PsymError(f"{output} exists and is not empty; use another --output")
    dirs = [output / "shards" / f"{i}-of-{shards}" for i in range(1, shards + 1)]
    options = {"concurrency": concurrency, "cache": cache}
    if executor == "local":
        for i, d in enumerate(dirs, 1):
            run_shard_task(plan, str(d), i, shards, options, session)
    else:
        _run_dask(plan, dirs, shards, scheduler, options)
    return _merge_into(dirs, output, session)


def _merge_into(dirs: list[Path], output: Path, session: Session) -> MergeReport:

    tmp = Path(tempfile.mkdtemp(prefix=".merge-", dir=output))
    try:
        report = merge_runs(dirs, tmp / "run", session)
        for p in (tmp / "run").iterdir():
            p.replace(output / p.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return MergeReport(output, report.shards, report.units, report.samples)


def _run_dask(
    plan: Plan, dirs: list[Path], shards: int, scheduler: str | None, options: dict[str, Any]
) -> None:
    try:
        from distributed import Client, LocalCluster, comm  # on demand: the [dask] extra
    except ImportError:
        raise PsymError(
            "--executor dask needs Dask: pip install 'psymetrics-core[dask]' (dask[distributed])"
        ) from None
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=shards,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            host="127.0.0.1",
        )
    try:
        with _client(Client, comm, cluster, scheduler) as client:
            futures = [
                client.submit(run_shard_task, plan, str(d), i, shards, options, pure=False)
                for i, d in enumerate(dirs, 1)
            ]
            for f in futures:
                f.result()
    finally:
        if cluster is not None:
            cluster.close()


def check_scheduler(address: str, comm: Any) -> str:
    """``address`` as Dask reads a scheduler address (``[PROTOCOL://]HOST:PORT``, parsed by
    Dask's ``distributed.comm``), or one line naming ``--scheduler`` and what was expected."""
    shown = address.strip()[:200]
    expected = "expected [tcp://]HOST:PORT, e.g. tcp://10.0.0.5:8786"
    try:
        protocol, location = comm.parse_address(address.strip())
        if protocol not in comm.registry.backends:
            raise ValueError(f"unknown protocol {protocol[:40]!r}")
        if protocol != "inproc":
            try:
                _, port = comm.parse_host_port(location)
            except ValueError as exc:
                if "invalid literal" not in str(exc):
                    raise
                raise ValueError("the port is not a number") from None
            if not isinstance(port, int) or not 1 <= port <= 65535:
                raise ValueError(f"port {port} is not in 1-65535")
    except (ValueError, TypeError) as exc:
        reason = f"{exc}; {expected}"
        raise PsymError(f"--scheduler {shown!r}: not a scheduler address ({reason})") from None
    return address.strip()


def _client(client_cls: Any, comm: Any, cluster: Any, scheduler: str | None) -> Any:
    """A Dask client of ``cluster`` or of the scheduler at ``scheduler``: an address that is
    malformed, or where no scheduler answers within ``SCHEDULER_WAIT`` seconds, is one line."""
    if cluster is not None:
        return client_cls(cluster)
    address = check_scheduler(str(scheduler), comm)
    try:
        return client_cls(address, timeout=SCHEDULER_WAIT)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise PsymError(
            f"--scheduler {address[:200]!r}: no Dask scheduler answered within "
            f"{SCHEDULER_WAIT} s ({reason})"
        ) from None
