"""Model access: the ``Backend`` contract, the response cache and the model clients.

``base`` is the contract every backend implements (and plugins register through
``register_backends``); ``cache`` the response cache (WAL + leases), ``cache_transfer`` its
export and import; ``openai_*`` the OpenAI-compatible clients (chat, completions, Batch API);
``lmeval_bridge`` an lm-eval model as a backend. Heavy libraries (torch, transformers) are
imported only when a backend that needs them is built.

May import: base.
"""
