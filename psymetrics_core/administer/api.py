"""The library functions of ``psymetrics_core.__all__`` (re-exported there, loaded on first use).

Each reads the installed plugins through a fresh ``Session`` (building one loads the plugins),
or through the ``session=`` a caller passes to reuse one or to use plugins registered in code.

May import: base, instruments, records, backends, pluginsys, administer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psymetrics_core.administer.answers import score_responses as _score
from psymetrics_core.administer.config import RunConfig
from psymetrics_core.administer.runner import evaluate as _evaluate
from psymetrics_core.base.types import Instrument
from psymetrics_core.instruments.spec import load_instrument as _load
from psymetrics_core.pluginsys.session import Session

__all__ = [
    "evaluate",
    "score_responses",
    "get_instrument",
    "list_instruments",
    "load_instrument",
    "session_or_default",
]


def evaluate(tasks: list[Any], **kwargs: Any) -> dict[str, Any]:
    """Run ``tasks`` (task ids or task objects) on a model and return the results dict.

    The keyword arguments are the fields of ``psymetrics_core.administer.config.RunConfig``
    (``model``, ``mode``, ``limit``, ``output``, ``conditions``, ...; an unknown one is a
    ``TypeError``) and ``session``, ``backend``, ``progress``, ``run_dir`` (the caller's claim
    of ``output``, from ``records.rundir.claim_run_dir``); see
    ``psymetrics_core.administer.runner.evaluate``. ``config=RunConfig(...)`` passes a ready
    configuration instead.
    """
    live = {k: kwargs.pop(k) for k in ("session", "backend", "progress", "run_dir") if k in kwargs}
    config = kwargs.pop("config", None)
    if config is None:
        config = RunConfig.from_options(**kwargs)
    elif kwargs:
        raise TypeError(f"evaluate(): config= and options ({', '.join(kwargs)}) given together")
    live["session"] = _session(live.get("session"))
    return _evaluate(tasks, config, **live)


def score_responses(
    task: str, path: str | Path, form: str = "original", *, session: Session | None = None
) -> dict[str, Any]:
    """Score a long-format ``respondent,item,response`` CSV with ``task``'s key."""
    return _score(task, path, _session(session), form)


def get_instrument(task: str, *, session: Session | None = None) -> Instrument:
    """The installed instrument registered as ``task``."""
    return _session(session).get_instrument(task)


def list_instruments(*, session: Session | None = None) -> dict[str, Instrument]:
    """Every installed instrument by task id."""
    return _session(session).instruments()


def session_or_default(session: Session | None = None) -> Session:
    """``session``, or a fresh session of the installed plugins (building one loads them).

    The one place below the package root that builds a default ``Session``: the entry points
    (these functions, the ``psym`` command, the lm-eval runtime, ``psymetrics_core.testing``)
    call it; everything below them takes the session it is handed
    (tests/pluginsys/test_session_required.py)."""
    return session if session is not None else Session()


_session = session_or_default


def load_instrument(path: str | Path) -> Instrument:
    """Load and validate an instrument spec from a YAML file or its folder."""
    return _load(path)
