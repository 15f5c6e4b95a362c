"""psymetrics: give psychometric instruments to language models and score them like people.

Public API::

    import psymetrics_core as psym
    results = psym.evaluate(["bfi", "mfq"], mode="logprob", output="runs/first")
    psym.score_responses("bfi", "answers.csv")

Each function reads the installed plugins through a fresh ``Session`` (building one loads the
plugins), or through the ``session=`` you pass to reuse one, or to use one holding plugins
registered in code (``psymetrics_core.pluginsys.session.Session``).

Importing this package is cheap: no torch, transformers or lm_eval is imported until a model
backend is built.

The names in ``__all__`` are the stable surface for plugin authors (CONTRIBUTING: "The public
API"): the functions below, ``hookimpl``, and the value types, errors, backend contract, task
kinds and condition base that plugins build on, each importable from here (loaded on first use).
Old module paths from before the layered layout still import, with a DeprecationWarning
(``psymetrics_core._moved``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core import _moved
from psymetrics_core.base.versions import __version__
from psymetrics_core.pluginsys.hookspecs import hookimpl

_moved.install()

if TYPE_CHECKING:
    from psymetrics_core.administer.conditions import Condition
    from psymetrics_core.administer.kinds import (
        FreeTextTask,
        JudgedTask,
        JudgeStage,
        ProbeTask,
        Task,
        TaskKind,
        TaskResults,
        TaskScores,
        share_score,
    )
    from psymetrics_core.backends.base import Backend, GenerationSettings
    from psymetrics_core.base.errors import BackendError, PsymError, ResponsesError, SpecError
    from psymetrics_core.base.types import (
        Answer,
        Completion,
        Generation,
        ImagePart,
        Instrument,
        Item,
        LazyInstrument,
        Option,
        PluginInfo,
        Prompt,
        Score,
        Verdict,
    )
    from psymetrics_core.pluginsys.session import Session

# the re-exported names, by the module that defines them (imported on first use)
_LAZY: dict[str, str] = {
    **dict.fromkeys(["PsymError", "SpecError", "BackendError", "ResponsesError"], "base.errors"),
    **dict.fromkeys(
        ["Item", "Option", "Instrument", "LazyInstrument", "Prompt", "ImagePart", "Completion"]
        + ["Answer", "Generation", "Verdict", "Score", "PluginInfo"],
        "base.types",
    ),
    **dict.fromkeys(["Backend", "GenerationSettings"], "backends.base"),
    **dict.fromkeys(
        ["Task", "TaskKind", "TaskResults", "TaskScores", "FreeTextTask", "JudgedTask"]
        + ["JudgeStage", "ProbeTask", "share_score"],
        "administer.kinds",
    ),
    "Condition": "administer.conditions",
}


def __getattr__(name: str) -> Any:
    """A re-exported name on first use (importing the package stays cheap)."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"psymetrics_core.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'psymetrics_core' has no attribute {name!r}")


__all__ = [
    "__version__",
    "hookimpl",
    "data_files",
    "evaluate",
    "score_responses",
    "get_instrument",
    "list_instruments",
    "load_instrument",
    # value types and errors (base)
    "Item",
    "Option",
    "Instrument",
    "LazyInstrument",
    "Prompt",
    "ImagePart",
    "Completion",
    "Answer",
    "Generation",
    "Verdict",
    "Score",
    "PluginInfo",
    "PsymError",
    "SpecError",
    "BackendError",
    "ResponsesError",
    # the backend contract
    "Backend",
    "GenerationSettings",
    # task kinds and conditions
    "Task",
    "TaskKind",
    "TaskResults",
    "TaskScores",
    "FreeTextTask",
    "JudgedTask",
    "JudgeStage",
    "ProbeTask",
    "share_score",
    "Condition",
]


def data_files(package: str) -> list[Path]:
    """Every ``instruments/*/instrument.yaml`` shipped inside ``package`` (for plugins)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    if len(places) == 1 and Path(places[0]).is_dir():  # a package on disk (the usual case)
        root: Any = Path(places[0]) / "instruments"
    else:  # anything else importlib.resources can read
        from importlib import resources

        root = resources.files(package) / "instruments"
    out = []
    for sub in sorted(root.iterdir(), key=lambda p: p.name):
        spec = sub / "instrument.yaml"
        if spec.is_file():
            out.append(Path(str(spec)))
    return out


def evaluate(tasks: list[Any], **kwargs: Any) -> dict[str, Any]:
    """Run ``tasks`` (task ids or task objects) on a model and return the results dict.

    The keyword arguments are the fields of ``psymetrics_core.administer.config.RunConfig``
    (``model``, ``mode``, ``limit``, ``output``, ``conditions``, ...; an unknown one is a
    ``TypeError``) and ``session``, ``backend``, ``progress``; see
    ``psymetrics_core.administer.runner.evaluate``. ``config=RunConfig(...)`` passes a ready
    configuration instead.
    """
    from psymetrics_core.administer.config import RunConfig
    from psymetrics_core.administer.runner import evaluate as _evaluate

    live = {k: kwargs.pop(k) for k in ("session", "backend", "progress") if k in kwargs}
    config = kwargs.pop("config", None)
    if config is None:
        config = RunConfig.from_options(**kwargs)
    elif kwargs:
        raise TypeError(f"evaluate(): config= and options ({', '.join(kwargs)}) given together")
    return _evaluate(tasks, config, **live)


def score_responses(
    task: str, path: str | Path, form: str = "original", *, session: Session | None = None
) -> dict[str, Any]:
    """Score a long-format ``respondent,item,response`` CSV with ``task``'s key."""
    from psymetrics_core.administer.answers import score_responses as _score

    return _score(task, path, _session(session), form)


def get_instrument(task: str, *, session: Session | None = None) -> Instrument:
    """The installed instrument registered as ``task``."""
    return _session(session).get_instrument(task)


def list_instruments(*, session: Session | None = None) -> dict[str, Instrument]:
    """Every installed instrument by task id."""
    return _session(session).instruments()


def _session(session: Session | None) -> Session:
    """``session``, or a fresh session of the installed plugins."""
    from psymetrics_core.pluginsys.session import Session

    return session if session is not None else Session()


def load_instrument(path: str | Path) -> Instrument:
    """Load and validate an instrument spec from a YAML file or its folder."""
    from psymetrics_core.instruments.spec import load_instrument as _load

    return _load(path)
