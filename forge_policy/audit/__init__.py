"""Audit sinks: append-only records of overrides, blocks and bypasses."""

from forge_policy.audit.memory import MemoryAuditSink

__all__ = ["MemoryAuditSink"]
