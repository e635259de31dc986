"""The engine: SPEC §3 counting and escalation, §4 overrides, as pure decisions returning effects.

``inputs`` (settings, the per-event fact cache) → ``decide`` (pure: reads a session snapshot,
returns the decision, the effects and the explain trace) with ``overrides`` (§4 mechanisms as
effects) → ``effects`` (the one writer of session state) and ``records`` (audit records) →
``evaluator`` (the ``Evaluator``: one store transaction per event, audit first, reconcile from
the log, stateless fallback). ``reconcile`` replays the audit log into a state, ``bypass``
audits ``FORGE_DISABLE``, ``reports`` holds the typed public results (``Status``,
``ExplainReport``, ``OverrideGrant``, …).
"""
