"""The schema versions: of the run records (written into every record as ``schema_version``)
and of instrument specs (``schema_version`` of an ``instrument.yaml``)."""

from __future__ import annotations

from typing import Literal

__all__ = ["RECORD_SCHEMA_VERSION", "SPEC_SCHEMA_VERSION"]

RECORD_SCHEMA_VERSION: Literal[1] = 1
SPEC_SCHEMA_VERSION: Literal[1] = 1
