"""The typed public results, where they have always been importable from: their home is
:mod:`forge_policy.reports` (one module per result: status, explain, insights, json), which
imports neither the engine nor the audit sinks.

>>> from forge_policy.engine.reports import Status, to_json
>>> to_json(Status("s1", exists=False))["exists"]
False
"""

from __future__ import annotations

from forge_policy.reports import (
    BehaviorExplanation,
    BehaviorInsight,
    BehaviorSkipped,
    BehaviorStatus,
    CatalogEntry,
    ConditionTrace,
    ExplainReport,
    GovernanceSummary,
    GovernanceTotals,
    OverrideGrant,
    OverrideRecord,
    PendingReleased,
    SessionTally,
    Status,
    TraceEntry,
    TriggerTrace,
    Withdrawn,
    catalog_entries,
    explain_report,
    status_of,
    to_json,
    trace_entry,
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
