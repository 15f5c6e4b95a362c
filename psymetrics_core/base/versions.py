"""Versions: of psymetrics itself (``__version__``, which setup.cfg reads), of the run records
(written into every record as ``schema_version``) and of instrument specs (``schema_version``
of an ``instrument.yaml``)."""

from __future__ import annotations

from typing import Literal

__all__ = ["__version__", "RECORD_SCHEMA_VERSION", "SPEC_SCHEMA_VERSION"]

__version__ = "0.1.0"

RECORD_SCHEMA_VERSION: Literal[1] = 1
SPEC_SCHEMA_VERSION: Literal[1] = 1
