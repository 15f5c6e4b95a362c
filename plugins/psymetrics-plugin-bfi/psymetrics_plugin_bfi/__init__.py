"""psymetrics plugin: the Big Five Inventory, tasks ``bfi`` (BFI-44) and ``bfi10`` (BFI-10)."""

from psymetrics_core import data_files, hookimpl

__version__ = "0.1.0"


@hookimpl
def register_instruments(register):
    """Register every instrument shipped in this package."""
    for spec in data_files(__name__):
        register(spec)
