"""psymetrics plugin: the 16Personalities 60-item questionnaire (UNOFFICIAL key), task ``16p``.

Besides the data-only registration, two hooks apply only to ``16p`` (every other task gets
``None``, i.e. "not mine"): ``score`` maps each dimension's mean (1-7) onto 0-100 toward the first
pole, and ``aggregate`` adds the four-letter type and the ``unofficial`` key flag to every result.
"""

from __future__ import annotations

from psymetrics_core import data_files, hookimpl

from .typing16p import TASK, percent_scores, type_record

__version__ = "0.1.0"


@hookimpl
def register_instruments(register):
    """Register every instrument shipped in this package."""
    for spec in data_files(__name__):
        register(spec)


@hookimpl
def score(instrument, responses, form):
    """0-100 dimension scores toward the first pole for ``16p``; None for any other task."""
    if instrument.id != TASK:
        return None
    return percent_scores(instrument, responses, form)


@hookimpl
def aggregate(instrument, scores, answers):
    """The core's results entry plus the type code and the unofficial-key flag, for ``16p``."""
    if instrument.id != TASK:
        return None
    from psymetrics_core.api import default_aggregate as core_aggregate

    entry = core_aggregate(instrument=instrument, scores=scores, answers=answers)
    entry.update(type_record(scores))
    return entry
