"""The record of one ``psym analyze`` section (``AnalysisSection``), shared by the built-in
sections and the plugins' (``analysis.sections`` re-exports it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AnalysisSection"]


@dataclass(frozen=True)
class AnalysisSection:
    """One plugin's part of the ``psym analyze`` report.

    ``key`` names it in the JSON report (``report["sections"][key]``), ``title`` heads the
    printed text, ``text`` is the plain-text rendering and ``data`` the JSON-able content.
    """

    key: str
    title: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)
