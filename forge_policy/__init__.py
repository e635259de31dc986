"""forge_policy: an embeddable policy engine that governs what AI coding agents do.

>>> import forge_policy as fp
>>> ev = fp.Evaluator(fp.builtin_catalog())
>>> decision = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Read",
...                                 tool_input={"file_path": "/src/app.py"}))
>>> decision.outcome
'allow'

Public names are loaded on first use (PEP 562), so ``import forge_policy`` stays cheap for hook
processes and pulls in neither ruamel.yaml nor portalocker nor any framework.
"""

from __future__ import annotations

from forge_policy._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.audit.base import AuditSink
    from forge_policy.audit.jsonl import JsonlAuditSink
    from forge_policy.audit.memory import MemoryAuditSink
    from forge_policy.audit.postgres import PostgresAuditSink
    from forge_policy.audit.sqlite import SQLiteAuditSink
    from forge_policy.audit.verify import VerifyReport
    from forge_policy.catalog import builtin_catalog, load_catalog
    from forge_policy.catalog.behavior import Behavior, Trigger
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.config.env import build_evaluator
    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.errors import (
        AuditError,
        AuditIntegrityError,
        CatalogError,
        EventError,
        FactTimeout,
        ForgePolicyError,
        Issue,
        LockTimeout,
        StoreError,
    )
    from forge_policy.facts import FactRegistry, builtin_facts
    from forge_policy.levels import Level
    from forge_policy.model import ConditionResult, Decision, Event, Violation
    from forge_policy.reports import (
        BehaviorInsight,
        BehaviorStatus,
        CatalogEntry,
        ExplainReport,
        GovernanceSummary,
        OverrideGrant,
        OverrideRecord,
        Status,
    )
    from forge_policy.state import SessionState
    from forge_policy.stores.base import RuntimeStore
    from forge_policy.stores.file import FileStore
    from forge_policy.stores.memory import MemoryStore
    from forge_policy.stores.postgres import PostgresStore
    from forge_policy.stores.sqlite import SQLiteStore

#: The package's version, written here only: pyproject.toml reads it (``dynamic``), the compiled
#: catalog cache records it. A literal, so that reading it costs the hook nothing.
__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AuditError": "forge_policy.errors",
    "AuditIntegrityError": "forge_policy.errors",
    "AuditSink": "forge_policy.audit.base",
    "Behavior": "forge_policy.catalog.behavior",
    "BehaviorInsight": "forge_policy.reports.insights",
    "BehaviorStatus": "forge_policy.reports.status",
    "Catalog": "forge_policy.catalog.catalog",
    "CatalogEntry": "forge_policy.reports.status",
    "CatalogError": "forge_policy.errors",
    "ConditionResult": "forge_policy.model",
    "Decision": "forge_policy.model",
    "Evaluator": "forge_policy.engine.evaluator",
    "Event": "forge_policy.model",
    "EventError": "forge_policy.errors",
    "ExplainReport": "forge_policy.reports.explain",
    "FactRegistry": "forge_policy.facts",
    "FileStore": "forge_policy.stores.file",
    "FactTimeout": "forge_policy.errors",
    "ForgePolicyError": "forge_policy.errors",
    "GovernanceSummary": "forge_policy.reports.insights",
    "OverrideGrant": "forge_policy.reports.status",
    "Issue": "forge_policy.errors",
    "JsonlAuditSink": "forge_policy.audit.jsonl",
    "Level": "forge_policy.levels",
    "LockTimeout": "forge_policy.errors",
    "MemoryAuditSink": "forge_policy.audit.memory",
    "MemoryStore": "forge_policy.stores.memory",
    "OverrideRecord": "forge_policy.reports.status",
    "RuntimeStore": "forge_policy.stores.base",
    "PostgresAuditSink": "forge_policy.audit.postgres",
    "PostgresStore": "forge_policy.stores.postgres",
    "SQLiteAuditSink": "forge_policy.audit.sqlite",
    "SQLiteStore": "forge_policy.stores.sqlite",
    "SessionState": "forge_policy.state",
    "Status": "forge_policy.reports.status",
    "StoreError": "forge_policy.errors",
    "Trigger": "forge_policy.catalog.behavior",
    "VerifyReport": "forge_policy.audit.verify",
    "Violation": "forge_policy.model",
    "build_evaluator": "forge_policy.config.env",
    "builtin_catalog": "forge_policy.catalog",
    "builtin_facts": "forge_policy.facts",
    "load_catalog": "forge_policy.catalog",
}

__all__ = [
    "AuditError",
    "AuditIntegrityError",
    "AuditSink",
    "Behavior",
    "BehaviorInsight",
    "BehaviorStatus",
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "ConditionResult",
    "Decision",
    "Evaluator",
    "Event",
    "EventError",
    "ExplainReport",
    "FactRegistry",
    "FactTimeout",
    "FileStore",
    "ForgePolicyError",
    "GovernanceSummary",
    "Issue",
    "JsonlAuditSink",
    "Level",
    "LockTimeout",
    "MemoryAuditSink",
    "MemoryStore",
    "OverrideGrant",
    "OverrideRecord",
    "PostgresAuditSink",
    "PostgresStore",
    "RuntimeStore",
    "SQLiteAuditSink",
    "SQLiteStore",
    "SessionState",
    "Status",
    "StoreError",
    "Trigger",
    "VerifyReport",
    "Violation",
    "build_evaluator",
    "builtin_catalog",
    "builtin_facts",
    "load_catalog",
]

__getattr__, __dir__ = lazy_exports("forge_policy", _EXPORTS, __all__, globals())
