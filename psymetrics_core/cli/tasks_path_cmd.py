"""``psym tasks-path``: where the installed lm-eval task export lives (for ``--include_path``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click

from psymetrics_core.base.errors import PsymError

TASKS_PACKAGE = "psymetrics_core.lm_eval_tasks"


def installed_tasks_path() -> Path:
    """The folder of the lm-eval tasks that ship in ``psymetrics_core.lm_eval_tasks``."""
    spec = importlib.util.find_spec(TASKS_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        if (Path(folder) / "psym.yaml").is_file():
            return Path(folder).resolve()
    raise PsymError(
        f"no exported lm-eval tasks in this installation ({TASKS_PACKAGE} lacks psym.yaml); "
        "reinstall psymetrics-core, or write them with: psym export lm-eval --output DIR"
    )


@click.command("tasks-path")
def tasks_path_cmd() -> None:
    """Print the folder of the lm-eval tasks installed with psymetrics-core.

    Use it as lm_eval --include_path "$(psym tasks-path)" --tasks psym_bfi ... (the task's
    plugin must be installed too). The folder holds the tasks of the plugins published with this
    psymetrics-core release; `psym export lm-eval --output DIR` writes them for whatever
    plugins are installed, and `psym lm-eval` does so on the fly.
    """
    click.echo(str(installed_tasks_path()))
