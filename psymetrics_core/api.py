"""The plugin API: every core name a plugin may import, in one place.

A plugin imports only ``psymetrics_core`` and ``psymetrics_core.api`` (as an ``llm`` plugin
imports only ``llm``)::

    from psymetrics_core.api import PsymError, read_text, write_output, stdout, Condition

The names below are re-exported from the modules that define them (as inspect_ai's public
packages re-export from private modules); those modules are internal and may move, and a move
changes one line of ``_WHERE``. An import-linter contract (pyproject.toml, "plugins use only the
public API") fails when a package under ``plugins/`` imports any other core module.

Importing this module is cheap: each name is imported on first use. The list, grouped by job, is
docs/reference/public-api.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from psymetrics_core import data_files
    from psymetrics_core.administer.api import (
        evaluate,
        get_instrument,
        list_instruments,
        load_instrument,
        score_responses,
        session_or_default,
    )
    from psymetrics_core.administer.kinds import (
        FreeTextTask,
        JudgedKind,
        JudgedTask,
        ProbeTask,
        Task,
        TaskResults,
        TaskScores,
        share_score,
    )
    from psymetrics_core.administer.kinds.free_text import task_sample
    from psymetrics_core.analysis.sections import AnalysisRequest
    from psymetrics_core.backends.base import (
        Backend,
        GenerationSettings,
        OnResult,
        Reporter,
        as_backend,
        call_backend,
        parse_model_args,
    )
    from psymetrics_core.backends.http import HTTP_ARGS, HTTPBackend
    from psymetrics_core.base.bounds import Bound, bound, task_option_bound
    from psymetrics_core.base.errors import BackendError, PsymError, ResponsesError, SpecError
    from psymetrics_core.base.images import check_image_bytes, check_image_file, image_mime
    from psymetrics_core.base.paths import (
        cache_dir,
        models_dir,
        remove_stale_conversions,
        stale_conversions,
    )
    from psymetrics_core.base.reading import load_json, parse_json, read_csv, read_text
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
        ScaleScore,
        Score,
        Verdict,
    )
    from psymetrics_core.base.writing import atomic_write, check_target, store_quietly, write_output
    from psymetrics_core.cli import session_of
    from psymetrics_core.cli.bounded import bounded
    from psymetrics_core.cli.console import print_json, progress_bar, stderr, stdout, table
    from psymetrics_core.contracts import (
        Administration,
        AnalysisSection,
        Cell,
        CellRun,
        Condition,
        JudgeStage,
        RatedScale,
        TaskKind,
        instrument_record,
        user_prompt,
    )
    from psymetrics_core.instruments.item_texts import parse_items_option, require_item_texts
    from psymetrics_core.instruments.scoring import scale_value
    from psymetrics_core.pluginsys.backend_hints import (
        DEFAULT_MODEL,
        HF_DIST,
        SMOLLM2_WHEEL_INSTALL,
        backend_install,
    )
    from psymetrics_core.pluginsys.defaults.aggregate import aggregate as default_aggregate
    from psymetrics_core.pluginsys.defaults.score import score as default_score
    from psymetrics_core.pluginsys.hookspecs import hookimpl
    from psymetrics_core.pluginsys.loader import plugin_versions
    from psymetrics_core.pluginsys.session import Session
    from psymetrics_core.records.inputs import run_inputs
    from psymetrics_core.records.read import load_run_data
    from psymetrics_core.records.rundir import RunDir, claim_run_dir
    from psymetrics_core.records.writer import provenance, redact, write_results

# Each public name -> "module" (relative to psymetrics_core) or "module:attribute" when the
# public name differs from the defining one. Grouped as docs/reference/public-api.md lists them.
_WHERE: dict[str, str] = {
    # the package's functions and the hook marker
    **dict.fromkeys(
        ["evaluate", "score_responses", "get_instrument", "list_instruments", "load_instrument"]
        + ["session_or_default"],
        "administer.api",
    ),
    "data_files": "",
    "hookimpl": "pluginsys.hookspecs",
    "Session": "pluginsys.session",
    "plugin_versions": "pluginsys.loader",
    # value types and errors
    **dict.fromkeys(
        ["Item", "Option", "Instrument", "LazyInstrument", "Prompt", "ImagePart", "Completion"]
        + ["Answer", "Generation", "Verdict", "Score", "ScaleScore", "PluginInfo"],
        "base.types",
    ),
    **dict.fromkeys(["PsymError", "SpecError", "BackendError", "ResponsesError"], "base.errors"),
    # bounded reading and writing, bounds, images, paths
    **dict.fromkeys(["read_text", "read_csv", "load_json", "parse_json"], "base.reading"),
    **dict.fromkeys(
        ["write_output", "check_target", "atomic_write", "store_quietly"], "base.writing"
    ),
    **dict.fromkeys(["Bound", "bound", "task_option_bound"], "base.bounds"),
    **dict.fromkeys(["check_image_file", "check_image_bytes", "image_mime"], "base.images"),
    **dict.fromkeys(
        ["cache_dir", "models_dir", "stale_conversions", "remove_stale_conversions"], "base.paths"
    ),
    # the backend contract and install hints
    **dict.fromkeys(
        ["Backend", "GenerationSettings", "OnResult", "Reporter"]
        + ["as_backend", "call_backend", "parse_model_args"],
        "backends.base",
    ),
    **dict.fromkeys(["HTTPBackend", "HTTP_ARGS"], "backends.http"),  # the HTTP base
    **dict.fromkeys(
        ["DEFAULT_MODEL", "HF_DIST", "SMOLLM2_WHEEL_INSTALL", "backend_install"],
        "pluginsys.backend_hints",
    ),
    # conditions, cells and task kinds (one line each to change when they move)
    **dict.fromkeys(
        ["Condition", "Cell", "TaskKind", "CellRun", "Administration", "RatedScale"]
        + ["JudgeStage", "user_prompt", "instrument_record"],
        "contracts",
    ),
    **dict.fromkeys(
        ["Task", "TaskResults", "TaskScores", "FreeTextTask", "JudgedTask", "JudgedKind"]
        + ["ProbeTask", "share_score"],
        "administer.kinds",
    ),
    "task_sample": "administer.kinds.free_text",
    # scoring helpers and item texts
    "scale_value": "instruments.scoring",
    "default_score": "pluginsys.defaults.score:score",
    "default_aggregate": "pluginsys.defaults.aggregate:aggregate",
    **dict.fromkeys(["require_item_texts", "parse_items_option"], "instruments.item_texts"),
    # run records
    "load_run_data": "records.read",
    "run_inputs": "records.inputs",
    **dict.fromkeys(["claim_run_dir", "RunDir"], "records.rundir"),
    **dict.fromkeys(["provenance", "redact", "write_results"], "records.writer"),
    # analyses and the command line
    "AnalysisSection": "contracts",
    "AnalysisRequest": "analysis.sections",
    "session_of": "cli",
    "bounded": "cli.bounded",
    **dict.fromkeys(["stdout", "stderr", "table", "print_json", "progress_bar"], "cli.console"),
}


def where(name: str) -> tuple[str, str]:
    """The defining module's full name and the attribute there for public ``name``."""
    module, _, attr = _WHERE[name].partition(":")
    return ("psymetrics_core" + (f".{module}" if module else ""), attr or name)


def __getattr__(name: str) -> Any:
    """A public name on first use (importing this module stays cheap)."""
    if name in _WHERE:
        module, attr = where(name)
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'psymetrics_core.api' has no attribute {name!r}")


__all__ = sorted(_WHERE)
