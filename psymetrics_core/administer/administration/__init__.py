"""Administration modes: one module per mode (``item_by_item``, ``battery``, ``verbalized``,
``interview``, ``interview_expert``),
registered in ``builtin`` through the ``register_administrations`` hook, selected by
``Cell.administration``.

Adding a mode is one new module with an ``contracts.Administration`` subclass plus its
registration (here for the core, in a plugin's own ``register_administrations`` otherwise).
"""

from __future__ import annotations

from psymetrics_core.administer.administration.battery import Battery
from psymetrics_core.administer.administration.interview import Interview
from psymetrics_core.administer.administration.interview_expert import (
    InterviewExpert,
    InterviewExpertAll,
)
from psymetrics_core.administer.administration.item_by_item import ItemByItem
from psymetrics_core.administer.administration.verbalized import Verbalized

__all__ = [
    "Battery",
    "Interview",
    "InterviewExpert",
    "InterviewExpertAll",
    "ItemByItem",
    "Verbalized",
]
