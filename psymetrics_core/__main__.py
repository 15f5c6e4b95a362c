"""``python -m psymetrics_core`` runs the ``psym`` command line."""

from .cli import console_main

console_main()
