"""Run the real ``lm_eval`` command line with freshly exported psymetrics tasks on its path."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from psymetrics_core.base.errors import PsymError
from psymetrics_core.export.lm_eval_tasks import export_lm_eval

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["with_include_path", "run_lm_eval"]


def with_include_path(args: Sequence[str], folder: str | Path) -> list[str]:
    """``args`` with ``folder`` first on ``--include_path`` (a user's own path is kept after it,
    so its tasks override ours, as lm-eval lets later include paths win)."""
    out: list[str] = []
    user: str | None = None
    it = iter(args)
    for arg in it:
        if arg == "--include_path":
            user = next(it, None)
            if user is None:
                raise PsymError("--include_path needs a folder")
        elif arg.startswith("--include_path="):
            user = arg.split("=", 1)[1]
        else:
            out.append(arg)
    path = str(folder) if not user else f"{folder}:{user}"
    return [*out, "--include_path", path]


def run_lm_eval(args: Sequence[str], session: Session) -> int:
    """Export every instrument of ``session`` to a temporary folder and run ``lm_eval`` on it.

    Returns lm_eval's exit status. Needs lm-eval installed
    (``pip install 'psymetrics-core[lm-eval]'``).
    """

    if importlib.util.find_spec("lm_eval") is None:
        raise PsymError("lm-eval is not installed: pip install 'psymetrics-core[lm-eval]'")
    with tempfile.TemporaryDirectory(prefix="psym-lm-eval-") as tmp:
        report = export_lm_eval(Path(tmp) / "tasks", session=session)
        for note in report.skip_notes():
            print(f"psym: not exported {note}", file=sys.stderr)
        argv = with_include_path(args, Path(tmp) / "tasks")
        return subprocess.call([sys.executable, "-m", "lm_eval", *argv])
