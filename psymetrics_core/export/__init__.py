"""Exports of installed instruments to other tools: lm-evaluation-harness task folders, tidy tables.

``lm_eval_tasks`` writes the task folders (the committed ``tasks/`` is its output), ``lm_eval_cli``
and ``lm_eval_runtime`` run them through lm-eval, ``tidy`` flattens run records into tables.

May import: base, instruments, records, backends, contracts, pluginsys, administer.
"""

from __future__ import annotations

from psymetrics_core.export.lm_eval_tasks import ExportReport, export_lm_eval

__all__ = ["export_lm_eval", "ExportReport"]
