"""``python -m psymetrics_core`` runs the ``psym`` command line."""

from psymetrics_core.cli import console_main

console_main()
