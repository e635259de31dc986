"""The engine: SPEC §3 counting and escalation, §4 overrides, as pure decisions returning effects.

``inputs`` (settings, the per-event fact cache) → ``decide`` (pure: reads a session snapshot,
returns the decision, the effects and the explain trace) with ``overrides`` (§4 mechanisms as
effects) → ``effects`` (the one writer of session state) and ``records`` (audit records) →
``session`` (catch up: the one base state a decision is made on, brought up to the audit log
where it matters; the stateless fallback's rebuilt state) → ``evaluator`` (the ``Evaluator``,
thread-safe: one store transaction per event, audit first). ``reconcile`` turns audit records
back into effects, ``bypass`` audits ``FORGE_DISABLE`` (an input of the evaluator, recorded by
``evaluate``), ``queries`` answers status, explain and the explicit override, ``reports`` holds
the typed public results (``Status``, ``ExplainReport``, ``OverrideGrant``, …).
"""
