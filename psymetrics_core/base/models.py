"""The two base models of every record: ``Strict`` (unknown keys refused) and ``Open``
(unknown keys kept, for plugins' own fields).

Both build their validation schema when a record is first validated, not when the class is
defined (``defer_build``): a command that imports a record module uses only a few of its
models, and building a pydantic schema costs milliseconds per model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Open", "Strict"]


class Strict(BaseModel):
    """A record whose keys are exactly its fields."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class Open(BaseModel):
    """A record that keeps keys it does not declare."""

    model_config = ConfigDict(extra="allow", defer_build=True)
