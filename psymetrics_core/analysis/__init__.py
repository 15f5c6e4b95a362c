"""``psym analyze``: reliability, validity, norm and response-style analyses of run records.

Pure functions on arrays and frames live in one module per topic (``consistency``,
``reliability``, ``norms``, ``styles``, ``mbti``, ``facets``, ``validity``); ``report`` puts
them together for run directories read by ``records``. No model is called. Every section of
``psym analyze`` is an analysis registered with ``register_analyses``: the core's in
``builtin`` (functions in ``builtin_sections``), the plugins' in their own packages;
``sections`` runs them and ``outputs`` writes the report.

May import: base, instruments, records, backends, contracts, pluginsys, administer.
"""
