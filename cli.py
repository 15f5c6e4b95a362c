"""Repository-root shim: ``python cli.py ...`` runs the ``psym`` command line.

This file is not installed; the installed console script is ``psym``.
"""

from psymetrics_core.cli import console_main

if __name__ == "__main__":
    console_main()
