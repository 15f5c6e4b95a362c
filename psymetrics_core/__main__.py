"""``python -m psymetrics_core`` runs the ``psym`` command line."""

from .cli import main

main()
