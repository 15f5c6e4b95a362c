"""Exports of installed instruments to other tools (lm-evaluation-harness task folders)."""

from __future__ import annotations

from psymetrics_core.export.lm_eval_tasks import ExportReport, export_lm_eval

__all__ = ["export_lm_eval", "ExportReport"]
