"""Typed public results: what :meth:`~forge_policy.Evaluator.status`,
:meth:`~forge_policy.Evaluator.explain`, :meth:`~forge_policy.Evaluator.override` and
``forge-policy audit`` return, and the one converter that turns them into the JSON the
``--json`` options print.

One module per result: :mod:`~forge_policy.reports.status` (a session's counters and levels,
overrides, the catalog listing), :mod:`~forge_policy.reports.explain` (a dry run's trace),
:mod:`~forge_policy.reports.insights` (the governance summary of the audit log) and
:mod:`~forge_policy.reports.json` (:func:`to_json`). The types are frozen attrs classes built
from the catalog and a :class:`~forge_policy.SessionState` through its public accessors only;
this package imports neither the engine nor the audit sinks, which both import it. The names
are re-exported here and, as before, from :mod:`forge_policy.engine.reports`.

>>> import forge_policy as fp
>>> ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0)
>>> _ = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Write",
...                          tool_input={"file_path": "/src/a.py", "content": "x"}))
>>> status = ev.status("s1")
>>> status.behaviors["search-first"].counter, status.behaviors["search-first"].level
(1, <Level.NUDGE: 1>)
>>> to_json(status)["behaviors"]["search-first"]["level"]
'nudge'
"""

from __future__ import annotations

from forge_policy.reports.explain import (
    BehaviorExplanation,
    BehaviorSkipped,
    ConditionTrace,
    ExplainReport,
    PendingReleased,
    TraceEntry,
    TriggerTrace,
    Withdrawn,
    explain_report,
    trace_entry,
)
from forge_policy.reports.insights import (
    BehaviorInsight,
    GovernanceSummary,
    GovernanceTotals,
    SessionTally,
)
from forge_policy.reports.json import to_json
from forge_policy.reports.status import (
    BehaviorStatus,
    CatalogEntry,
    OverrideGrant,
    OverrideRecord,
    Status,
    catalog_entries,
    status_of,
)

__all__ = [
    "BehaviorExplanation",
    "BehaviorInsight",
    "BehaviorSkipped",
    "BehaviorStatus",
    "CatalogEntry",
    "ConditionTrace",
    "ExplainReport",
    "GovernanceSummary",
    "GovernanceTotals",
    "OverrideGrant",
    "OverrideRecord",
    "PendingReleased",
    "SessionTally",
    "Status",
    "TraceEntry",
    "TriggerTrace",
    "Withdrawn",
    "catalog_entries",
    "explain_report",
    "status_of",
    "to_json",
    "trace_entry",
]
