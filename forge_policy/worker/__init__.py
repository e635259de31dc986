"""The warm worker: hook clients that pay one interpreter start (SPEC §10).

:mod:`forge_policy.worker.client` is the hook ``forge-policy init`` writes (``python -I -S
…/worker/launch.py`` runs it from cached bytecode; built-in modules only), and
:mod:`forge_policy.worker.fallback` what it does when the worker gives no answer (loaded only
then); :mod:`forge_policy.worker.server` is the process it asks over a Unix socket, one per
``FORGE_ROOT`` and environment (at most ``FORGE_WORKER_MAX``, the least recently used stopped
beyond), started on demand and exiting when idle; :mod:`forge_policy.worker.protocol` (built-ins
only) is what both speak: the framing, the request, the hook's options, ``FORGE_ROOT`` and the
limits, its rules in :mod:`forge_policy.worker.wire` (functions only: all the client loads).
Any failure of the worker makes the client evaluate in-process, never allow.
"""
