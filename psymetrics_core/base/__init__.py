"""The vocabulary every layer shares: errors, value types, bounded readers, paths, redaction.

``errors`` (``PsymError`` and its kinds: one clear line, never a traceback), ``types`` (the
frozen value types and protocols at the plugin boundary: ``Item``, ``Instrument``, ``Prompt``,
``Completion``, ``Score``, ...), ``reading`` (the one bounded-reader module for YAML, JSON, CSV
and text input), ``writing`` (the one writer of output files, and ``atomic_write``, the one
atomic write), ``paths`` (``cache_dir()``), ``redaction``, ``versions`` (the schema versions)
and ``models`` (the pydantic bases of the typed records).

Layer direction: base <- instruments | records | backends <- pluginsys <- administer <- study |
analysis | export <- report <- cli.

May import: nothing of psymetrics_core (the standard library and third-party packages only).
"""
