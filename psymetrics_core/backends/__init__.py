"""Model access: the ``Backend`` contract, the response cache and the model clients.

``base`` is the contract every backend implements (and plugins register through
``register_backends``); ``cache`` the response cache (WAL + leases), ``cache_transfer`` its
export and import; ``http`` (with ``http_args``) the public HTTP base of API backends
(transport apart from the payload mapping); ``openai_*`` the OpenAI-compatible clients built on
it (chat, completions, Batch API);
``lmeval_bridge`` an lm-eval model as a backend. Heavy libraries (torch, transformers) are
imported only when a backend that needs them is built.

May import: base.
"""
