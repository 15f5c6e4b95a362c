"""The plugin system: hook specs, the ``Session`` that owns the plugin manager, loading, registries.

``hookspecs`` (the public hook specifications), ``session`` (the plugin manager and what the
installed plugins register), ``loader`` and ``failures`` (loading entry points with each
failure contained and reported), ``registries`` and ``registry`` (instruments, conditions,
backends, task kinds, analyses by name), ``catalogue`` (the list of known plugins and
``psym install``), ``kit`` (``psym new-plugin``) and ``defaults/`` (the built-in hook
implementations: render, parse, score, aggregate, the default backends).

May import: base, instruments, records, backends, contracts.
"""
