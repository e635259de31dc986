"""``forge-policy ui``: a read-only dashboard served on loopback.

Three modules, one concept each: :mod:`~forge_policy.ui.data` gathers what the page shows from
the store and the audit log (JSON-ready, redacted), :mod:`~forge_policy.ui.page` renders it as
one server-side HTML page (every recorded string escaped), :mod:`~forge_policy.ui.server` serves
it on 127.0.0.1 behind a random token to the user who started it
(:mod:`~forge_policy.ui.peer` tells who is connecting). Nothing here writes: no endpoint takes a
body, and gathering only reads.
"""
