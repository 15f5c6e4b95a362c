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
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core.pluginsys.hookspecs import hookimpl

if TYPE_CHECKING:
    from psymetrics_core.base.types import Instrument, LazyInstrument
    from psymetrics_core.pluginsys.session import Session


def __getattr__(name: str) -> Any:
    """``LazyInstrument`` on first use (importing the package stays cheap)."""
    if name == "LazyInstrument":
        from psymetrics_core.base.types import LazyInstrument

        return LazyInstrument
    raise AttributeError(f"module 'psymetrics_core' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "__version__",
    "hookimpl",
    "LazyInstrument",
    "data_files",
    "evaluate",
    "score_responses",
    "get_instrument",
    "list_instruments",
    "load_instrument",
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


def evaluate(tasks: list[Any], *, session: Session | None = None, **kwargs: Any) -> dict[str, Any]:
    """Run ``tasks`` (task ids or task objects) on a model; see
    ``psymetrics_core.administer.runner.evaluate`` for the options."""
    from psymetrics_core.administer.runner import evaluate as _evaluate

    return _evaluate(tasks, session=_session(session), **kwargs)


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
