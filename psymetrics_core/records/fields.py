"""The bounded field types of the run records: what a number or name in a record may hold.

A record read back from disk may have been edited by hand or damaged; these types make the
record models refuse what no ``psym eval`` writes (and the writers refuse it too):

- ``Count``: an integer 0..2**63-1 (item counts, repeats); ``Int``: any 64-bit integer (seeds,
  response codes);
- ``Number``: a finite number within +-1e9 (no scale is wider; "NaN" and 1e308 refused);
- ``Rate``: a finite number within [0, 1] (parse rates);
- ``Name``: a string of at most ``MAX_NAME`` characters (labels, task, scale, condition and
  item names; a 1 MB label would make every page that shows it slow).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AllowInfNan, Field

__all__ = ["MAX_INT", "MAX_NUMBER", "MAX_NAME", "Count", "Int", "Number", "Rate", "Name"]

MAX_INT = 2**63 - 1
MAX_NUMBER = 1e9
MAX_NAME = 1000

Count = Annotated[int, Field(ge=0, le=MAX_INT)]
Int = Annotated[int, Field(ge=-MAX_INT, le=MAX_INT)]
Number = Annotated[float, AllowInfNan(False), Field(ge=-MAX_NUMBER, le=MAX_NUMBER)]
Rate = Annotated[float, AllowInfNan(False), Field(ge=0.0, le=1.0)]
Name = Annotated[str, Field(max_length=MAX_NAME)]
