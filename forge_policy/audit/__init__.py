"""Audit sinks: append-only records of overrides, blocks and bypasses.

Names are loaded on first use (PEP 562): importing this package (which the evaluator does for
the memory sink) does not import :mod:`sqlite3` or portalocker.

>>> from forge_policy.audit import JsonlAuditSink
>>> JsonlAuditSink("/nonexistent/audit/overrides.log")  # nothing is created before an append
JsonlAuditSink('/nonexistent/audit/overrides.log')
"""

from __future__ import annotations

from forge_policy._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.audit.insights import override_ids, summarize
    from forge_policy.audit.jsonl import JsonlAuditSink
    from forge_policy.audit.memory import MemoryAuditSink
    from forge_policy.audit.sqlite import SQLiteAuditSink
    from forge_policy.audit.verify import VerifyReport

_EXPORTS: dict[str, str] = {
    "JsonlAuditSink": "forge_policy.audit.jsonl",
    "MemoryAuditSink": "forge_policy.audit.memory",
    "SQLiteAuditSink": "forge_policy.audit.sqlite",
    "VerifyReport": "forge_policy.audit.verify",
    "override_ids": "forge_policy.audit.insights",
    "summarize": "forge_policy.audit.insights",
}

__all__ = [
    "JsonlAuditSink",
    "MemoryAuditSink",
    "SQLiteAuditSink",
    "VerifyReport",
    "override_ids",
    "summarize",
]

__getattr__, __dir__ = lazy_exports("forge_policy.audit", _EXPORTS, __all__, globals())
