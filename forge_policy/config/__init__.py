"""Configuration: ``env`` reads the ``FORGE_*`` variables into a ``Config`` that builds the
evaluator, store and audit sink; ``layers`` reads the layered configuration files (profile,
per-behavior settings, exceptions, floor; SPEC §10); ``project`` reads ``testing:`` of
``.forge/config.yaml`` (git-side settings)."""
