"""psymetrics plugin: contamination probes for any instrument with item texts.

Adds ``psym contamination`` through the ``register_commands`` hook: the five probes of Han et
al. (2025) (verbatim recall, key-information recall, item-dimension mapping, option-score
mapping, target-score matching), a generation-free order test after Oren et al. (2023) with
positive controls, bootstrap intervals and a contamination index. See :func:`run.contamination`.
"""

from __future__ import annotations

from typing import Any

from psymetrics_core import hookimpl

__version__ = "0.1.0"


@hookimpl
def register_commands(cli: Any) -> None:
    """Add ``psym contamination`` to the command line."""
    from .cli import contamination_cmd

    cli.add_command(contamination_cmd)
