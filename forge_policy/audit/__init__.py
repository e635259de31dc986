"""Audit sinks: append-only records of overrides, blocks and bypasses.

Names are loaded on first use (PEP 562): importing this package (which the evaluator does for
the memory sink) does not import :mod:`sqlite3` or portalocker. The optional capabilities a
sink may have beyond :class:`~forge_policy.AuditSink` are the protocols :class:`SessionRecords`,
:class:`RecordsSince`, :class:`SessionRecordsSince`, :class:`SessionRecordsAfter` (which reads
into a :class:`Span`), :class:`NewestFirst`, :class:`Verifiable` and :class:`Checkpointed`
(:mod:`forge_policy.audit.base`).

>>> from forge_policy.audit import JsonlAuditSink
>>> JsonlAuditSink("/nonexistent/audit/overrides.log")  # nothing is created before an append
JsonlAuditSink('/nonexistent/audit/overrides.log')
"""

from __future__ import annotations

from forge_policy._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.audit.base import (
        Checkpointed,
        NewestFirst,
        RecordsSince,
        SessionRecords,
        SessionRecordsAfter,
        SessionRecordsSince,
        Span,
        Verifiable,
    )
    from forge_policy.audit.insights import override_ids, summarize
    from forge_policy.audit.jsonl import JsonlAuditSink
    from forge_policy.audit.memory import MemoryAuditSink
    from forge_policy.audit.postgres import PostgresAuditSink
    from forge_policy.audit.sqlite import SQLiteAuditSink
    from forge_policy.audit.verify import VerifyReport

_EXPORTS: dict[str, str] = {
    "Checkpointed": "forge_policy.audit.base",
    "JsonlAuditSink": "forge_policy.audit.jsonl",
    "MemoryAuditSink": "forge_policy.audit.memory",
    "NewestFirst": "forge_policy.audit.base",
    "PostgresAuditSink": "forge_policy.audit.postgres",
    "RecordsSince": "forge_policy.audit.base",
    "SQLiteAuditSink": "forge_policy.audit.sqlite",
    "SessionRecords": "forge_policy.audit.base",
    "SessionRecordsAfter": "forge_policy.audit.base",
    "SessionRecordsSince": "forge_policy.audit.base",
    "Span": "forge_policy.audit.base",
    "Verifiable": "forge_policy.audit.base",
    "VerifyReport": "forge_policy.audit.verify",
    "override_ids": "forge_policy.audit.insights",
    "summarize": "forge_policy.audit.insights",
}

__all__ = [
    "Checkpointed",
    "JsonlAuditSink",
    "MemoryAuditSink",
    "NewestFirst",
    "PostgresAuditSink",
    "RecordsSince",
    "SQLiteAuditSink",
    "SessionRecords",
    "SessionRecordsAfter",
    "SessionRecordsSince",
    "Span",
    "Verifiable",
    "VerifyReport",
    "override_ids",
    "summarize",
]

__getattr__, __dir__ = lazy_exports("forge_policy.audit", _EXPORTS, __all__, globals())
