"""``psym analyze``: reliability, validity, norm and response-style analyses of run records.

Pure functions on arrays and frames live in one module per topic (``consistency``,
``reliability``, ``norms``, ``styles``, ``mbti``, ``facets``, ``validity``); ``report`` puts
them together for run directories read by ``records``. No model is called.

May import: base, instruments, records, backends, contracts, pluginsys, administer.
"""

from __future__ import annotations

from psymetrics_core.analysis.report import analyze as _analyze

__all__ = ["analyze"]


def analyze(*args: object, **kwargs: object) -> dict[str, object]:
    """Build the analysis report for run directories (see ``report.analyze``)."""

    return _analyze(*args, **kwargs)  # type: ignore[arg-type]
