"""Configuration: ``env`` reads the ``FORGE_*`` variables into a ``Config`` that builds the
evaluator, store and audit sink; ``project`` reads ``.forge/config.yaml`` (git-side settings)."""
