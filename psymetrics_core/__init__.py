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
Everything else a plugin needs is in ``psymetrics_core.api``.
"""

from __future__ import annotations

import importlib
import importlib.util
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core.base.versions import __version__
from psymetrics_core.pluginsys.hookspecs import hookimpl

if TYPE_CHECKING:  # for type checkers; at run time each name comes from psymetrics_core.api
    from psymetrics_core.administer.api import (
        evaluate,
        get_instrument,
        list_instruments,
        load_instrument,
        score_responses,
    )
    from psymetrics_core.administer.kinds import (
        FreeTextTask,
        JudgedTask,
        JudgeStage,
        ProbeTask,
        Task,
        TaskResults,
        TaskScores,
        share_score,
    )
    from psymetrics_core.backends.base import Backend, GenerationSettings
    from psymetrics_core.backends.http import HTTP_ARGS, HTTPBackend
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
    from psymetrics_core.contracts import Administration, Cell, CellRun, Condition, TaskKind

# the re-exported names, each taken from the plugin API (psymetrics_core.api, which says where
# each is defined) on first use
_LAZY: dict[str, str] = dict.fromkeys(
    ["evaluate", "score_responses", "get_instrument", "list_instruments", "load_instrument"]
    + ["Item", "Option", "Instrument", "LazyInstrument", "Prompt", "ImagePart", "Completion"]
    + ["Answer", "Generation", "Verdict", "Score", "PluginInfo"]
    + ["PsymError", "SpecError", "BackendError", "ResponsesError"]
    + ["Backend", "GenerationSettings", "HTTPBackend", "HTTP_ARGS"]
    + ["Task", "TaskKind", "TaskResults", "TaskScores", "FreeTextTask", "JudgedTask"]
    + ["JudgeStage", "ProbeTask", "share_score"]
    + ["Condition", "Cell", "TaskKind", "CellRun", "Administration"],
    "api",
)


def __getattr__(name: str) -> Any:
    """A re-exported name on first use (importing the package stays cheap)."""
    if name in _LAZY:
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
    # the HTTP base of API backends (backends/http.py; docs/plugins/http-backend.md)
    "HTTPBackend",
    "HTTP_ARGS",
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
    "Cell",
    "CellRun",
    "Administration",
]


def data_files(package: str) -> list[Path]:
    """Every ``instruments/*/instrument.yaml`` shipped inside ``package`` (for plugins)."""
    spec = importlib.util.find_spec(package)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    if len(places) == 1 and Path(places[0]).is_dir():  # a package on disk (the usual case)
        root: Any = Path(places[0]) / "instruments"
    else:  # anything else importlib.resources can read
        root = resources.files(package) / "instruments"
    out = []
    for sub in sorted(root.iterdir(), key=lambda p: p.name):
        spec = sub / "instrument.yaml"
        if spec.is_file():
            out.append(Path(str(spec)))
    return out
