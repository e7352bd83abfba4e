"""Reviews by capability: a pinned snapshot, a short-lived capability handed out
once, a reviewer session distinct from the producer's, one verdict routed through the core's
``checkpoint_decided`` after the same currency checks people's decisions pass.

``models`` holds the records and request bodies, ``pinning`` the pure snapshot and currency
check, ``handoff`` the reviewer prompt, ``capabilities`` the Redis store, ``service`` the
three operations (request, start, submit) the web process and the CLI call, and
``automatic`` questbot's own model reviewer for advisory checkpoints and shadow mode.
"""
