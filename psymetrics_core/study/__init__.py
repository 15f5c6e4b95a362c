"""Many runs: study plans, sharding and merging, executors (Dask) and the Batch API flow.

``plan`` expands a study file into runs, ``shard`` and ``merge`` split one run over machines
and join the parts, ``executor`` runs the plan locally or on Dask, ``batch`` submits and
collects through an OpenAI-compatible Batch API.

May import: base, instruments, records, backends, contracts, pluginsys, administer.
"""
