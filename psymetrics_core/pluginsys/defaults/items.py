"""Default ``load_items``: the items of the requested form, as loaded from the spec."""

from __future__ import annotations

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Instrument, Item
from psymetrics_core.pluginsys.hookspecs import hookimpl


@hookimpl(trylast=True)
def load_items(instrument: Instrument, form: str) -> list[Item]:
    """Return the items of ``form``; an unknown form is an error listing the known ones."""
    if form not in instrument.forms:
        raise PsymError(
            f"task '{instrument.id}' has no form '{form}' (forms: {', '.join(instrument.forms)})"
        )
    return list(instrument.forms[form])
