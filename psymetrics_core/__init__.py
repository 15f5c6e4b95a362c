"""psymetrics: give psychometric instruments to language models and score them like people.

Public API::

    import psymetrics_core as psym
    results = psym.evaluate(["bfi", "mfq"], mode="logprob", output="runs/first")
    psym.score_responses("bfi", "answers.csv")

Importing this package is cheap: no torch, transformers or lm_eval is imported until a model
backend is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core.pluginsys.hookspecs import hookimpl

if TYPE_CHECKING:
    from psymetrics_core.base.types import Instrument, LazyInstrument


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


def score_responses(task: str, path: str | Path, form: str = "original") -> dict[str, Any]:
    """Score a long-format ``respondent,item,response`` CSV with ``task``'s key."""
    from psymetrics_core.administer.answers import score_responses as _score

    return _score(task, path, form)


def get_instrument(task: str) -> Instrument:
    """The installed instrument registered as ``task``."""
    from psymetrics_core.pluginsys.registry import get_instrument as _get

    return _get(task)


def list_instruments() -> dict[str, Instrument]:
    """Every installed instrument by task id."""
    from psymetrics_core.pluginsys.registry import instruments

    return instruments()


def load_instrument(path: str | Path) -> Instrument:
    """Load and validate an instrument spec from a YAML file or its folder."""
    from psymetrics_core.instruments.spec import load_instrument as _load

    return _load(path)
