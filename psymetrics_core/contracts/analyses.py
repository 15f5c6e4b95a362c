"""The record of one ``psym analyze`` section (``AnalysisSection``): what every analysis
registered with ``register_analyses`` returns, the core's and the plugins' alike."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AnalysisSection", "Analysis"]


@dataclass(frozen=True)
class AnalysisSection:
    """One analysis's part of the ``psym analyze`` report.

    ``key`` names it in the JSON report (``report["sections"][key]``), ``title`` heads the
    printed text, ``text`` is the plain-text rendering and ``data`` the JSON-able content.
    """

    key: str
    title: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)


# ``analyse(request)``: the request is ``psymetrics_core.api.AnalysisRequest`` (run directories,
# session, options), defined above this layer; the result a section, or None (not my runs)
Analysis = Callable[..., AnalysisSection | None]
